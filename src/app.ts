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
import { type Context, Hono } from 'hono'
import type { Kysely } from 'kysely'
import { createAuthenticator } from './auth/authenticate.ts'
import { type Clock, systemClock } from './clock.ts'
import type { AppDeps, AppEnv, Deps, Logger } from './context.ts'
import { type Random, type Sha256Ctor, webRandom } from './crypto.ts'
import type { Database } from './db/schema.ts'
import { EpisodicError } from './errors.ts'
import { DEFAULT_BODY_LIMIT } from './http/body.ts'
import { errorResponse } from './http/errors.ts'
import { episodeRoutes } from './episodes/read-routes.ts'
import { evalIngestRoutes, evalReadRoutes } from './eval/routes.ts'
import { ingestRoutes } from './episodes/ingest-routes.ts'
import { uploadRoutes } from './episodes/upload-routes.ts'
import { createEpisodeWriter } from './episodes/writer.ts'
import type { Defer } from './db/batch.ts'
import { openApiDocument } from './openapi/document.ts'
import { portalRoutes } from './portal/routes.tsx'
import { createSessions, databaseSecret } from './auth/session.ts'
import type { ObjectStorage } from './storage/types.ts'
import { type ClientAddress, type RateLimit, rateLimit, SIGN_IN_LIMIT } from './http/rate-limit.ts'
import type { RevocationFeed } from './auth/revocations.ts'

/** Options of `createApp`: the capabilities the app runs on; only `db` is required. */
export interface EpisodicOptions {
  /** A migrated Kysely instance (see `openDatabase`). */
  db: Kysely<Database>
  /** Object storage; null or absent means `storage: "unconfigured"`. */
  storage?: ObjectStorage | null
  /** Time source (default the system clock); tests pass a fixed one. */
  clock?: Clock
  /** Random source for ids, keys and secrets (default Web Crypto's `getRandomValues`). */
  random?: Random
  /** Synchronous SHA-256 (default @aws-crypto/sha256-js; Node passes node:crypto's). */
  sha256?: Sha256Ctor
  /** Where internal errors are reported (default `console.error`); clients only see a generic 500. */
  logger?: Logger
  /** Request body limit in bytes (default 1 MiB); larger bodies get 413. */
  bodyLimit?: number
  /** Cache verified API keys this long (default 0: every request checks the database). */
  authCacheMs?: number
  /** Public origin (`https://episodic.example.com`) when behind a proxy. */
  baseUrl?: string
  /**
   * Signs portal session cookies. Absent, the service makes one and keeps it
   * in the database, so every instance on it shares it (a session signed by
   * one verifies on all).
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
  /**
   * Portal sign-in tries allowed per client address (default 10 a minute;
   * `false` turns the limit off). Counted per instance.
   */
  signInLimit?: RateLimit | false
  /**
   * API requests allowed per key (default: no limit). Over it: 429 with
   * Retry-After. Counted per instance.
   */
  apiRateLimit?: RateLimit
  /**
   * The client address of a request, from the runtime's `env` (the Node
   * adapter reads the socket, the Workers adapter `cf-connecting-ip`); wrap
   * it in `behindProxy` behind a trusted reverse proxy. Where it gives no
   * address the sign-in limit does not apply (one shared bucket would let
   * anyone lock everyone out).
   */
  clientAddress?: ClientAddress
  /**
   * Revocations made by other processes (see `RevocationFeed`), so keys
   * cached for `authCacheMs` stop working at once. Listened to only while
   * keys are cached; `app.ready` says when listening has begun, `app.close()`
   * stops it.
   */
  revocations?: RevocationFeed
}

/** The Hono app with its resolved capabilities. */
export type EpisodicApp = Hono<AppEnv> & {
  /** The capabilities the app was built with, defaults filled in. */
  deps: AppDeps
  /** Resolves once the `revocations` feed is heard (at once without one); rejects if it could not start. */
  ready: Promise<void>
  /** Stops listening for revocations. The database and storage stay the caller's to close. */
  close(): Promise<void>
}

/**
 * The full dependency set behind `app.deps`, for callers inside the package
 * (the CLI's control socket forgets revoked keys through `auth`). Not exported
 * from the entry points: `auth`, `sessions` and `episodes` are internals.
 */
export function internalDeps(app: EpisodicApp): Deps {
  return app.deps as Deps
}

/** Builds the app; `app.fetch` is the handler every runtime mounts. */
export function createApp(options: EpisodicOptions): EpisodicApp {
  const clock = options.clock ?? systemClock
  const sha256 = options.sha256 ?? (Sha256 as unknown as Sha256Ctor)
  const logger = options.logger ?? { error: (message, error) => console.error(message, error) }
  const random = options.random ?? webRandom
  // Without one given, the key every instance on the database shares (kept in it).
  const sessionSecret = options.sessionSecret ?? (() => databaseSecret(options.db, 'portal_session', random, clock))
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
    limits: limitsFor(options),
  }

  const app = new Hono<AppEnv>()
  app.onError((error, c) => errorResponse(error, logger, c.req.raw))
  const root = deps.baseUrl ? new URL(deps.baseUrl).pathname.replace(/\/+$/, '') : ''
  app.notFound((c) => {
    // `<prefix>/` reaches no route when the app is mounted under a prefix; like `<prefix>`, it leads to the portal.
    if (root && c.req.method === 'GET' && new URL(c.req.url).pathname === `${root}/`) return c.redirect(`${root}/portal`, 302)
    return errorResponse(new EpisodicError('not_found', 'not found'), logger)
  })

  app.get('/healthz', (c) => c.json({ ok: true }))
  // The service's root leads people to the portal (under a prefix mount too: the public URL's path, else the mount's).
  // Like the portal, it is no API route (an ALL route stays out of the OpenAPI document).
  app.all('/', (c) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') throw new EpisodicError('not_found', 'not found')
    return c.redirect(`${root || c.req.routePath.replace(/\/+$/, '')}/portal`, 302)
  })
  let openapi: Record<string, unknown> | undefined
  app.get('/openapi.json', (c) => {
    const { openapi: version, info, ...rest } = (openapi ??= openApiDocument())
    // `servers` names where this instance answers, so a generated client needs no base URL.
    return c.json({ openapi: version, info, servers: [{ url: deps.baseUrl ?? new URL(c.req.url).origin }], ...rest })
  })
  app.route('/api/ingest', ingestRoutes(deps))
  app.route('/api/ingest/eval-run', evalIngestRoutes(deps))
  app.route('/api/eval-runs', evalReadRoutes(deps))
  app.route('/api/episodes', episodeRoutes(deps))
  app.route('/api', uploadRoutes(deps))
  // The portal's pages are one handler (as the object store is): they are not
  // part of the API, so they stay out of its route table and OpenAPI document.
  const portal = new Hono<AppEnv>().route('/portal', portalRoutes(deps))
  const toPortal = (c: Context<AppEnv>) => {
    // Mounted under a prefix (nodeListener's `prefix`), the portal still gets
    // its own `/portal/...` path; its links and redirects add the public root.
    const mount = c.req.routePath.slice(0, c.req.routePath.lastIndexOf('/portal'))
    // The runtime's env goes along: the sign-in limit reads the client address from it.
    if (!mount) return portal.fetch(c.req.raw, c.env)
    const url = new URL(c.req.url)
    url.pathname = url.pathname.slice(mount.length)
    return portal.fetch(new Request(url, c.req.raw), c.env)
  }
  app.all('/portal', toPortal)
  app.all('/portal/*', toPortal)
  const storage = deps.storage
  if (storage?.handle) {
    app.all('/storage/*', (c) => storage.handle!(c.req.raw, clock.now()))
  }
  const listening = options.revocations && deps.auth.caching ? options.revocations.listen((keyId) => deps.auth.forget(keyId)) : undefined
  // Observed here so an embedder that never awaits `ready` gets no unhandled rejection.
  listening?.catch(() => {})
  return Object.assign(app, {
    deps,
    ready: listening ? listening.then(() => undefined) : Promise.resolve(),
    close: async () => {
      const stop = await listening?.catch(() => undefined)
      await stop?.()
    },
  })
}

/** The sign-in and per-key limiters the options ask for (see http/rate-limit.ts). */
function limitsFor(options: EpisodicOptions): Deps['limits'] {
  const address = options.clientAddress ?? (() => undefined)
  const signIn = options.signInLimit === false ? undefined : (options.signInLimit ?? SIGN_IN_LIMIT)
  const api = options.apiRateLimit
  return {
    signIn: signIn && rateLimit(signIn, (c) => address(c.req.raw, c.env), (_c, retryAfter, headers) => {
      throw new EpisodicError('rate_limited', `too many sign-in attempts from this address; try again in ${retryAfter} s`, {
        retryAfterSeconds: retryAfter,
        headers,
      })
    }, { failuresOnly: true }),
    api: api && rateLimit(api, (c) => c.get('keyId' as never) as string | undefined, (_c, retryAfter, headers) => {
      throw new EpisodicError('rate_limited', `too many requests for this API key (${api.limit} per ${api.windowMs / 1000} s); retry after ${retryAfter} s`, {
        retryAfterSeconds: retryAfter,
        headers,
      })
    }),
  }
}
