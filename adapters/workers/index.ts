/**
 * Cloudflare Workers adapter: turns a Worker's `env` into the core's options
 * and serves the same fetch handler. Needs the `nodejs_compat` flag
 * (postgres.js opens its TCP connection through it, and node:crypto hashes).
 *
 * - Database: PostgreSQL through postgres.js, at the Hyperdrive binding's
 *   connection string (`HYPERDRIVE`) or `DATABASE_URL`. A Worker may not reuse
 *   a socket across requests, so each request gets its own small pool, closed
 *   after the response (with Hyperdrive the real connections stay pooled);
 *   the app itself is built once per isolate (see request-sql.ts). API keys
 *   are checked against the database on every request unless
 *   `overrides.authCacheMs` says otherwise (no NOTIFY reaches a Worker).
 * - Migrations: applied once per isolate, before its first request is served
 *   (a cheap no-op check once the schema is current); `migrate: false` skips it.
 * - Uploads: the `S3_*` variables select an S3-compatible bucket (R2's S3 API);
 *   otherwise the built-in store runs inside the Worker, verifying its own SigV4
 *   URLs and keeping bytes in the R2 binding `BUCKET`, signed with the secret
 *   `EPISODIC_STORAGE_SECRET`. `EPISODIC_STORAGE=none` runs without uploads.
 *
 * @example
 * // src/index.ts of a Worker (wrangler.toml: see examples/workers)
 * import { createWorker } from 'episodic/workers'
 * export default createWorker()
 */
import { Kysely } from 'kysely'
import { createApp, type EpisodicApp, type EpisodicOptions } from '../../src/app.ts'
import { readConfig, type EpisodicConfig } from '../../src/config.ts'
import { base64url, webRandom } from '../../src/crypto.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createPostgresSql, postgresJsDialect } from '../../src/db/postgres-js.ts'
import type { Database } from '../../src/db/schema.ts'
import { EpisodicError } from '../../src/errors.ts'
import { errorResponse } from '../../src/http/errors.ts'
import { createLocalStorage, LOCAL_STORAGE_PREFIX } from '../../src/storage/local.ts'
import { s3ErrorResponse } from '../../src/storage/s3-error.ts'
import { createS3Storage } from '../../src/storage/s3.ts'
import type { ObjectStorage } from '../../src/storage/types.ts'
import { NodeSha256 } from '../node/sha256.ts'
import { createR2Files, type R2BucketLike } from './r2-files.ts'
import { requestScopedSql } from './request-sql.ts'

export { createR2Files, type R2BucketLike, type R2ObjectLike } from './r2-files.ts'

/** A Worker's `env`: string variables and secrets, plus bindings. */
export type WorkersEnv = Record<string, unknown>

/** What this adapter uses of a Worker's `ExecutionContext`. */
export interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void
}

/** Options of `createWorker`; every one has a default. */
export interface WorkerOptions {
  /** Name of the R2 binding behind the built-in store (default `BUCKET`). */
  bucketBinding?: string
  /** Name of the Hyperdrive binding (default `HYPERDRIVE`); without it `DATABASE_URL` is used. */
  hyperdriveBinding?: string
  /** postgres.js pool size per request (default 5, as Cloudflare suggests for Hyperdrive). */
  maxConnections?: number
  /** Apply pending migrations once per isolate (default true). */
  migrate?: boolean
  /** Further core options (clock, logger, bodyLimit, authCacheMs, ...). */
  overrides?: Partial<Omit<EpisodicOptions, 'db' | 'storage'>>
}

/** The Worker's default export: `export default createWorker()`. */
export interface EpisodicWorker {
  fetch(request: Request, env: WorkersEnv, ctx: ExecutionContextLike): Promise<Response>
}

/** What one isolate builds once, on its first request (bindings arrive with it). */
interface Isolate {
  app: EpisodicApp
  databaseUrl: string
  migrated?: Promise<void>
}

/**
 * Builds the Worker. Configuration errors (no database, no bucket or secret
 * for the built-in store) answer a generic 500 and are logged with the reason.
 */
export function createWorker(options: WorkerOptions = {}): EpisodicWorker {
  const isolates = new WeakMap<object, Isolate>()
  const scoped = requestScopedSql()
  const logger = options.overrides?.logger ?? { error: (message: string, error?: unknown) => console.error(message, error) }

  return {
    async fetch(request, env, ctx) {
      let isolate: Isolate
      try {
        isolate = isolates.get(env) ?? buildIsolate(env, options, new Kysely<Database>({ dialect: postgresJsDialect(scoped.sql) }), logger)
        isolates.set(env, isolate)
      } catch (error) {
        return errorResponse(new EpisodicError('internal', 'worker configuration', { cause: error }), logger, request)
      }
      if (isolate.app.deps.storage?.handle && isUnsizedUpload(request)) {
        // R2 stores a streamed body only when its length is known up front;
        // answer as S3 does rather than fail halfway.
        return s3ErrorResponse({ status: 411, code: 'MissingContentLength', message: 'You must provide the Content-Length HTTP header.' })
      }
      const pool = createPostgresSql(isolate.databaseUrl, { max: options.maxConnections ?? 5 })
      try {
        return await scoped.run(pool, async () => {
          if (options.migrate !== false) await migrateOnce(isolate)
          return isolate.app.fetch(request, env, ctx as never)
        })
      } catch (error) {
        return errorResponse(error, logger, request)
      } finally {
        ctx.waitUntil(pool.end({ timeout: 5 }))
      }
    },
  }
}

/** The first request of an isolate migrates; the others wait for it. A failure is retried by the next request. */
function migrateOnce(isolate: Isolate): Promise<void> {
  isolate.migrated ??= migrateToLatest(isolate.app.deps.db).then(
    () => undefined,
    (error: unknown) => {
      isolate.migrated = undefined
      throw error
    },
  )
  return isolate.migrated
}

function buildIsolate(env: WorkersEnv, options: WorkerOptions, db: Kysely<Database>, logger: NonNullable<EpisodicOptions['logger']>): Isolate {
  const strings: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string') strings[name] = value
  const config = readConfig(strings)
  const hyperdrive = env[options.hyperdriveBinding ?? 'HYPERDRIVE'] as { connectionString?: string } | undefined
  const databaseUrl = hyperdrive?.connectionString ?? config.databaseUrl
  if (!databaseUrl) throw new Error('no database: add a Hyperdrive binding named HYPERDRIVE or set DATABASE_URL')
  const app = createApp({
    sha256: NodeSha256,
    baseUrl: config.baseUrl,
    // Without EPISODIC_SESSION_SECRET portal sessions last as long as the isolate.
    sessionSecret: config.sessionSecret ?? base64url(webRandom.bytes(32)),
    logger,
    ...options.overrides,
    db,
    storage: workerStorage(config, env, options.bucketBinding ?? 'BUCKET'),
  })
  return { app, databaseUrl }
}

function isUnsizedUpload(request: Request): boolean {
  return request.method === 'PUT' && !request.headers.has('content-length') && new URL(request.url).pathname.includes(LOCAL_STORAGE_PREFIX)
}

function workerStorage(config: EpisodicConfig, env: WorkersEnv, bucketBinding: string): ObjectStorage | null {
  const storage = config.storage
  if (storage.kind === 'none') return null
  if (storage.kind === 's3') return createS3Storage({ ...storage.s3, sha256: NodeSha256 })
  const bucket = env[bucketBinding] as R2BucketLike | undefined
  if (!bucket || typeof bucket.put !== 'function') {
    throw new Error(`the built-in store needs an R2 bucket binding named ${bucketBinding} (or set the S3_* variables, or EPISODIC_STORAGE=none)`)
  }
  if (!storage.secret) throw new Error('the built-in store on Workers needs the secret EPISODIC_STORAGE_SECRET (any long random string)')
  return createLocalStorage({ files: createR2Files(bucket), secret: storage.secret, sha256: NodeSha256 })
}
