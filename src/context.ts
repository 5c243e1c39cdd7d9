/**
 * The resolved capabilities every route works with, built once by `createApp`
 * from its options (defaults filled in).
 */
import type { MiddlewareHandler } from 'hono'
import type { Kysely } from 'kysely'
import type { Authenticator } from './auth/authenticate.ts'
import type { Clock } from './clock.ts'
import type { Random, Sha256Ctor } from './crypto.ts'
import type { Database } from './db/schema.ts'
import type { EpisodeWriter } from './episodes/writer.ts'
import type { Sessions } from './auth/session.ts'
import type { ObjectStorage } from './storage/types.ts'

/** Where errors the client must not see (SQL, stacks) are reported. */
export interface Logger {
  /** Reports an internal failure with the error that caused it. */
  error(message: string, error?: unknown): void
  /** Reports an informational message; optional. */
  info?(message: string): void
}

/**
 * The capabilities an app runs on, as `createApp` resolved them from
 * `EpisodicOptions` (defaults filled in): `app.deps`. Pass it where an admin
 * function takes `AdminDeps` (`createClient(app.deps, 'lab')`).
 */
export interface AppDeps {
  /** The migrated database. */
  db: Kysely<Database>
  /** Object storage; `null` when the app runs without (`storage: "unconfigured"`). */
  storage: ObjectStorage | null
  /** Time source. */
  clock: Clock
  /** Source of ids, keys and secrets. */
  random: Random
  /** Synchronous SHA-256. */
  sha256: Sha256Ctor
  /** Where internal errors are reported. */
  logger: Logger
  /** Request body limit in bytes. */
  bodyLimit: number
  /** Fixed public origin of the service, when requests arrive through a proxy. */
  baseUrl: string | undefined
}

/** Everything the routes work with: the public capabilities plus the app's own machinery. */
export interface Deps extends AppDeps {
  /** Episode inserts and finalizes (batched where the runtime allows). */
  episodes: EpisodeWriter
  auth: Authenticator
  /** Portal sessions (signed cookies); the read endpoints accept them too. */
  sessions: Sessions
  /** Rate limiters (http/rate-limit.ts): portal sign-in per address, API per key; absent when off. */
  limits: { signIn: MiddlewareHandler | undefined; api: MiddlewareHandler | undefined }
}

/** Hono environment: `c.get('clientId')` (and the key's id, for per-key limits) after authentication. */
export interface AppEnv {
  /**
   * Set by authentication: the caller's client id and the API key's id. With
   * an `Idempotency-Key`, `idempotency` (episodes/idempotency.ts): the id the
   * created resource takes, and whether an earlier attempt may have made it.
   */
  Variables: { clientId: string; keyId: string; idempotency?: { id: string; retaken: boolean } }
}
