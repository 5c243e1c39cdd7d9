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
export type { Defer } from './db/batch.ts'
export type { AppDeps, AppEnv, Logger } from './context.ts'
export { type EpisodicConfig, readConfig, type S3Config } from './config.ts'
export { EpisodicError, type ErrorCode, type ErrorStatus, statusOf } from './errors.ts'
export { behindProxy, type ClientAddress, type RateLimit, SIGN_IN_LIMIT } from './http/rate-limit.ts'
export { type BigIntMode, jsonText, parseJson } from './http/json.ts'
export { type Clock, systemClock } from './clock.ts'
export { type Random, type Sha256Ctor, type Sha256Hash, type Sha256OneShot, webRandom } from './crypto.ts'

export { openDatabase, type OpenDatabaseOptions } from './db/open.ts'
export { postgresRevocations } from './db/notify.ts'
export type { RevocationFeed } from './auth/revocations.ts'
export { migrateToLatest } from './db/migrate.ts'
export {
  createPostgresDatabase,
  type PostgresDatabaseOptions,
  postgresJsDialect,
  type PostgresJsReserved,
  type PostgresJsResult,
  type PostgresJsSql,
} from './db/postgres-js.ts'
export { pgliteDialect, type PGliteLike } from './db/pglite.ts'
export type {
  ApiKeysTable,
  ClientsTable,
  Database,
  EpisodeSource,
  EpisodesTable,
  EpisodeStatus,
  EvalResultsTable,
  EvalResultStatus,
  EvalRunsTable,
  EvalRunStatus,
  IdempotencyKeysTable,
  Int8Column,
  JsonColumn,
  MultipartUploadsTable,
  ServiceSecretsTable,
  TimestampColumn,
  WebhookDeliveriesTable,
  WebhookDeliveryStatus,
  WebhookEndpointsTable,
} from './db/schema.ts'
export type { ColumnType } from 'kysely'

export { createLocalStorage, LOCAL_ACCESS_KEY_ID, type LocalStorageOptions } from './storage/local.ts'
export { createS3Storage, type S3StorageOptions } from './storage/s3.ts'
export { createMemoryFiles } from './storage/memory-files.ts'
export {
  ARTIFACT_CONTENT_TYPE,
  ARTIFACT_FILE,
  ARTIFACT_KINDS,
  type ArtifactKind,
  type BlobFiles,
  type BlobMultipart,
  type CompletedPart,
  type MultipartStore,
  type ObjectHead,
  objectKey,
  type ObjectStorage,
  type PresignInput,
  type SignedUrl,
  StorageError,
  type StoredPart,
} from './storage/types.ts'

export { type AdminDeps, archiveEpisode, type ClientInfo, createClient, createKey, type KeyInfo, listClients, listKeys, revokeKey } from './admin/admin.ts'
export { addWebhook, listWebhooks, removeWebhook, type WebhookInfo } from './webhooks/endpoints.ts'
export { type DeliverOptions, deliverWebhooks, type DeliveryReport, type FetchLike } from './webhooks/deliver.ts'
export { startWebhookDelivery, type WebhookLoop, type WebhookLoopOptions } from './webhooks/loop.ts'
export {
  type ActionDivergence,
  type EpisodeCounts,
  type MetricColumn,
  type MetricName,
  type MetricSpec,
  type MetricSummary,
  type ResultStatus,
  rollup,
  type RollupOptions,
  type RollupRow,
  type RollupSummary,
  type Verdict,
} from './eval/rollup.ts'

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
} from './episodes/ingest-schemas.ts'
export type { EpisodePage, ListEpisodesInput, ListEpisodesParams } from './episodes/schemas.ts'
export type {
  CreatedEvalRun,
  CreateEvalRunInput,
  CreateEvalRunParsed,
  EvalResult,
  EvalRunDetail,
  EvalRunInfo,
  EvalRunPage,
  FinalizedEvalRun,
  FinalizeEvalRunInput,
  ListEvalRunsInput,
  ListEvalRunsParams,
  UploadResultInput,
  UploadResultResult,
} from './eval/schemas.ts'
export type { MetricBlob, MetricOutcomeSource } from './eval/metric-blob.ts'
