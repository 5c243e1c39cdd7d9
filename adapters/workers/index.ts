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
 * - Webhooks: the `scheduled` handler (a Cron Trigger, every minute in
 *   examples/workers/wrangler.toml) sends the queued deliveries.
 *
 * @example
 * // src/index.ts of a Worker (wrangler.toml: see examples/workers)
 * import { createWorker } from 'episodic/workers'
 * export default createWorker()
 *
 * @module
 */
import { Kysely } from 'kysely'
import { createApp, type EpisodicApp, type EpisodicOptions } from '../../src/app.ts'
import { type EpisodicConfig, limitOptions, readConfig } from '../../src/config.ts'
import { migrateOnce } from '../../src/db/migrate.ts'
import { createPostgresSql, postgresJsDialect } from '../../src/db/postgres-js.ts'
import type { Database } from '../../src/db/schema.ts'
import { EpisodicError } from '../../src/errors.ts'
import { errorResponse } from '../../src/http/errors.ts'
import { createLocalStorage, LOCAL_STORAGE_PREFIX } from '../../src/storage/local.ts'
import { createS3Storage } from '../../src/storage/s3.ts'
import type { ObjectStorage } from '../../src/storage/types.ts'
import { deliverWebhooks } from '../../src/webhooks/deliver.ts'
import { NodeSha256 } from '../node/sha256.ts'
import { createR2Files, type R2BucketLike } from './r2-files.ts'
import { requestScopedSql } from './request-sql.ts'

export { createR2Files, type R2BucketLike, type R2MultipartUploadLike, type R2ObjectLike } from './r2-files.ts'

/** A Worker's `env`: string variables and secrets, plus bindings. */
export type WorkersEnv = Record<string, unknown>

/** What this adapter uses of a Worker's `ExecutionContext`. */
export interface ExecutionContextLike {
  /** Keeps the isolate alive until `promise` settles (used to close the request's pool after the response). */
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
  /** Most batches of 20 webhook deliveries one Cron Trigger run sends (default 10). */
  webhookBatches?: number
  /** Further core options (clock, logger, bodyLimit, authCacheMs, ...). */
  overrides?: Partial<Omit<EpisodicOptions, 'db' | 'storage'>>
}

/** The Worker's default export: `export default createWorker()`. */
export interface EpisodicWorker {
  /** Serves one request: the API, the portal and the built-in store. */
  fetch(request: Request, env: WorkersEnv, ctx: ExecutionContextLike): Promise<Response>
  /**
   * The Cron Trigger (`[triggers] crons` in wrangler.toml): sends the webhook
   * deliveries that are due, up to `webhookBatches` batches per run.
   */
  scheduled(controller: unknown, env: WorkersEnv, ctx: ExecutionContextLike): Promise<void>
}

/** What one isolate builds once, on its first request (bindings arrive with it). */
interface Isolate {
  app: EpisodicApp
  databaseUrl: string
  database: EpisodicConfig['database']
  migrated: () => Promise<void>
}

/**
 * Builds the Worker. Configuration errors (no database, no bucket or secret
 * for the built-in store) answer a generic 500 and are logged with the reason.
 */
export function createWorker(options: WorkerOptions = {}): EpisodicWorker {
  const isolates = new WeakMap<object, Isolate>()
  const scoped = requestScopedSql()
  const logger = options.overrides?.logger ?? { error: (message: string, error?: unknown) => console.error(message, error) }

  const isolateOf = (env: WorkersEnv): Isolate => {
    const isolate = isolates.get(env) ?? buildIsolate(env, options, new Kysely<Database>({ dialect: postgresJsDialect(scoped.sql) }), logger)
    isolates.set(env, isolate)
    return isolate
  }

  return {
    async fetch(request, env, ctx) {
      let isolate: Isolate
      try {
        isolate = isolateOf(env)
      } catch (error) {
        return errorResponse(new EpisodicError('internal', 'worker configuration', { cause: error }), logger, request)
      }
      // The built-in store never reads the database: its requests (uploads
      // that may run for minutes) get no pool and wait for no migration. Its
      // rules (411, 5 GiB, signatures) are the core's, as on every runtime.
      if (isolate.app.deps.storage?.handle && new URL(request.url).pathname.includes(LOCAL_STORAGE_PREFIX)) {
        return isolate.app.fetch(request, env, ctx as never)
      }
      const pool = poolOf(isolate, options)
      try {
        return await scoped.run(pool, async () => {
          if (options.migrate !== false) await isolate.migrated()
          return isolate.app.fetch(request, env, ctx as never)
        })
      } catch (error) {
        return errorResponse(error, logger, request)
      } finally {
        ctx.waitUntil(pool.end({ timeout: 5 }))
      }
    },

    async scheduled(_controller, env, ctx) {
      let isolate: Isolate
      try {
        isolate = isolateOf(env)
      } catch (error) {
        logger.error('webhook delivery: worker configuration', error)
        return
      }
      const pool = poolOf(isolate, options)
      const { db, clock } = isolate.app.deps
      try {
        await scoped.run(pool, async () => {
          if (options.migrate !== false) await isolate.migrated()
          for (let batch = 0; batch < (options.webhookBatches ?? 10); batch++) {
            const report = await deliverWebhooks({ db, clock, fetch: (url, init) => fetch(url, init), limit: 20 })
            if (!report.more) break
          }
        })
      } catch (error) {
        // A failed run is retried by the next trigger; the error goes to the Worker's logs.
        logger.error('webhook delivery failed', error)
      } finally {
        ctx.waitUntil(pool.end({ timeout: 5 }))
      }
    },
  }
}

/** A pool for one request or trigger; no statement_timeout unless configured (the platform bounds a request's time). */
function poolOf(isolate: Isolate, options: WorkerOptions) {
  const { connectTimeoutSeconds, statementTimeoutMs = 0 } = isolate.database
  return createPostgresSql(isolate.databaseUrl, { max: options.maxConnections ?? 5, connectTimeoutSeconds, statementTimeoutMs })
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
    // Without EPISODIC_SESSION_SECRET, the key kept in the database, which every isolate shares.
    sessionSecret: config.sessionSecret,
    logger,
    ...limitOptions(config),
    // Cloudflare sets it to the visitor's address on every request.
    clientAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
    ...options.overrides,
    db,
    storage: workerStorage(config, env, options.bucketBinding ?? 'BUCKET'),
  })
  return { app, databaseUrl, database: config.database, migrated: migrateOnce(db) }
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
  return createLocalStorage({
    files: createR2Files(bucket),
    secret: storage.secret,
    sha256: NodeSha256,
    publicBaseUrl: storage.publicBaseUrl,
    quotaBytes: storage.quotaBytes,
  })
}
