/**
 * `episodic`: the runtime-agnostic core. `createApp` builds one Web-standard
 * fetch handler from capabilities (database, object storage, clock, ...);
 * Workers, Deno and Bun mount `app.fetch` directly, and the adapters
 * (`episodic/node`, `episodic/deno`, `episodic/bun`, `episodic/workers`) only
 * turn a runtime's environment into those capabilities.
 *
 * @example
 * import { createApp, createS3Storage, openDatabase, readConfig } from 'episodic'
 * const config = readConfig(env) // Node's process environment, Deno.env.toObject(), a Worker's env
 * const db = await openDatabase({ url: config.databaseUrl }) // migrates
 * const app = createApp({ db, storage: createS3Storage({ endpoint, bucket, accessKeyId, secretAccessKey }) })
 * export default { fetch: app.fetch }
 *
 * @module
 */
export { createApp, type EpisodicApp, type EpisodicOptions } from './app.ts'
export type { AppEnv, Logger } from './context.ts'
export { readConfig, type EpisodicConfig, type S3Config } from './config.ts'
export { EpisodicError, statusOf, type ErrorCode } from './errors.ts'
export { systemClock, type Clock } from './clock.ts'
export { webRandom, type Random, type Sha256Ctor, type Sha256Hash, type Sha256OneShot } from './crypto.ts'

export { openDatabase, type OpenDatabaseOptions } from './db/open.ts'
export { migrateToLatest } from './db/migrate.ts'
export { createPostgresDatabase, postgresJsDialect, type PostgresDatabaseOptions, type PostgresJsSql } from './db/postgres-js.ts'
export { pgliteDialect, type PGliteLike } from './db/pglite.ts'
export type { Database, EpisodeSource, EpisodeStatus, EvalResultStatus, EvalRunStatus } from './db/schema.ts'

export { createLocalStorage, LOCAL_ACCESS_KEY_ID, type LocalStorageOptions } from './storage/local.ts'
export { createS3Storage, type S3StorageOptions } from './storage/s3.ts'
export { createMemoryFiles } from './storage/memory-files.ts'
export {
  ARTIFACT_CONTENT_TYPE,
  ARTIFACT_FILE,
  ARTIFACT_KINDS,
  objectKey,
  type ArtifactKind,
  type BlobFiles,
  type ObjectStorage,
  type PresignInput,
  type SignedUrl,
} from './storage/types.ts'

export {
  archiveEpisode,
  createClient,
  createKey,
  listClients,
  listKeys,
  revokeKey,
  type AdminDeps,
  type ClientInfo,
  type KeyInfo,
} from './admin/admin.ts'
export { rollup, type MetricSummary, type ResultStatus, type RollupSummary } from './eval/rollup.ts'

export * as schemas from './schemas.ts'
export type {
  Episode,
  FinalizeEpisodeInput,
  FinalizeEpisodeParsed,
  FinalizeEpisodeResult,
  OpenEpisodeInput,
  OpenEpisodeParsed,
  OpenEpisodeResult,
  UploadUrlEntry,
} from './ingest/schemas.ts'
export type { EpisodePage, ListEpisodesInput, ListEpisodesParams } from './episodes/schemas.ts'
export type {
  CreateEvalRunInput,
  CreateEvalRunParsed,
  CreatedEvalRun,
  EvalResult,
  EvalRunDetail,
  EvalRunInfo,
  EvalRunPage,
  FinalizeEvalRunInput,
  FinalizedEvalRun,
  ListEvalRunsInput,
  ListEvalRunsParams,
  UploadResultInput,
  UploadResultResult,
} from './eval/schemas.ts'
export type { MetricBlob } from './eval/metric-blob.ts'
