/**
 * The core: one Web-standard fetch handler built from an options object.
 * Everything runtime-specific (database connection, object storage, clock,
 * randomness, hashing, files) comes in as a capability, so the same handler
 * runs under Node, Deno, Bun and Cloudflare Workers.
 *
 * @example
 * const db = await openDatabase({ url: env.DATABASE_URL })
 * const app = createApp({ db, storage: createS3Storage({ ... }) })
 * export default { fetch: app.fetch }
 */
import { Sha256 } from '@aws-crypto/sha256-js'
import { Hono, type Context } from 'hono'
import type { Kysely } from 'kysely'
import { createAuthenticator } from './auth/authenticate.ts'
import { systemClock, type Clock } from './clock.ts'
import type { AppEnv, Deps, Logger } from './context.ts'
import { base64url, webRandom, type Random, type Sha256Ctor } from './crypto.ts'
import type { Database } from './db/schema.ts'
import { EpisodicError } from './errors.ts'
import { DEFAULT_BODY_LIMIT } from './http/body.ts'
import { errorResponse } from './http/errors.ts'
import { episodeRoutes } from './episodes/routes.ts'
import { evalIngestRoutes, evalReadRoutes } from './eval/routes.ts'
import { ingestRoutes } from './ingest/routes.ts'
import { createEpisodeWriter } from './ingest/writer.ts'
import type { Defer } from './db/batch.ts'
import { openApiDocument } from './openapi/document.ts'
import { portalRoutes } from './portal/routes.tsx'
import { createSessions } from './portal/session.ts'
import type { ObjectStorage } from './storage/types.ts'

export interface EpisodicOptions {
  /** A migrated Kysely instance (see `openDatabase`). */
  db: Kysely<Database>
  /** Object storage; null or absent means `storage: "unconfigured"`. */
  storage?: ObjectStorage | null
  clock?: Clock
  random?: Random
  /** Synchronous SHA-256 (default @aws-crypto/sha256-js; Node passes node:crypto's). */
  sha256?: Sha256Ctor
  logger?: Logger
  /** Request body limit in bytes (default 1 MiB); larger bodies get 413. */
  bodyLimit?: number
  /** Cache verified API keys this long (default 0: every request checks the database). */
  authCacheMs?: number
  /** Public origin (`https://episodic.example.com`) when behind a proxy. */
  baseUrl?: string
  /**
   * Signs portal session cookies. Give every instance the same one; absent, a
   * random secret is made, so sessions end when the process does.
   */
  sessionSecret?: string
  /**
   * Coalesce the episode opens and finalizes of one event-loop turn into one
   * statement each (see `db/batch.ts`): the function that runs a callback at
   * the end of the turn. The Node, Bun and Deno adapters pass `setImmediate`.
   * Absent: one statement per request, as on Workers, where requests may not
   * share a connection.
   */
  batchWrites?: Defer
}

export type EpisodicApp = Hono<AppEnv> & { deps: Deps }

/** Builds the app; `app.fetch` is the handler every runtime mounts. */
export function createApp(options: EpisodicOptions): EpisodicApp {
  const clock = options.clock ?? systemClock
  const sha256 = options.sha256 ?? (Sha256 as unknown as Sha256Ctor)
  const logger = options.logger ?? { error: (message, error) => console.error(message, error) }
  const random = options.random ?? webRandom
  const sessionSecret = options.sessionSecret ?? base64url(random.bytes(32))
  const deps: Deps = {
    db: options.db,
    episodes: createEpisodeWriter(options.db, options.batchWrites),
    storage: options.storage ?? null,
    clock,
    random,
    sha256,
    logger,
    auth: createAuthenticator({ db: options.db, sha256, now: () => clock.now().getTime(), cacheMs: options.authCacheMs }),
    sessions: createSessions({ db: options.db, sha256, clock, secret: sessionSecret }),
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    baseUrl: options.baseUrl?.replace(/\/+$/, ''),
  }

  const app = new Hono<AppEnv>()
  app.onError((error, c) => errorResponse(error, logger, c.req.raw))
  app.notFound(() => errorResponse(new EpisodicError('not_found', 'not found'), logger))

  app.get('/healthz', (c) => c.json({ ok: true }))
  let openapi: unknown
  app.get('/openapi.json', (c) => c.json((openapi ??= openApiDocument())))
  app.route('/api/ingest', ingestRoutes(deps))
  app.route('/api/ingest/eval-run', evalIngestRoutes(deps))
  app.route('/api/eval-runs', evalReadRoutes(deps))
  app.route('/api/episodes', episodeRoutes(deps))
  // The portal's pages are one handler (as the object store is): they are not
  // part of the API, so they stay out of its route table and OpenAPI document.
  const portal = new Hono<AppEnv>().route('/portal', portalRoutes(deps))
  const toPortal = (c: Context<AppEnv>) => {
    // Mounted under a prefix (nodeListener's `prefix`), the portal still gets
    // its own `/portal/...` path; its links and redirects add the public root.
    const mount = c.req.routePath.slice(0, c.req.routePath.lastIndexOf('/portal'))
    if (!mount) return portal.fetch(c.req.raw)
    const url = new URL(c.req.url)
    url.pathname = url.pathname.slice(mount.length)
    return portal.fetch(new Request(url, c.req.raw))
  }
  app.all('/portal', toPortal)
  app.all('/portal/*', toPortal)
  const storage = deps.storage
  if (storage?.handle) {
    app.all('/storage/*', (c) => storage.handle!(c.req.raw, clock.now()))
  }
  return Object.assign(app, { deps })
}
