/**
 * Portal sessions: a signed, expiring cookie that stands for "signed in with
 * API key <key_id> of client <client_id>". Nothing is stored server side; the
 * cookie is `v1.<key_id>.<client_id>.<expires_unix_s>.<hmac>` where the HMAC
 * (SHA-256, over the core's injected synchronous hash) covers everything
 * before it. Every request re-reads the key's row, so revoking the key ends
 * every session made with it at once; the expiry bounds the rest (signing out
 * only deletes the cookie in that browser).
 *
 * @example
 * const sessions = createSessions({ db, sha256, clock, secret })
 * const { value, expiresAt } = await sessions.issue(keyId, clientId)
 * const session = await sessions.verify(value) // { clientId, keyId, expiresAt } | null
 */
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { Kysely } from 'kysely'
import { type Clock, systemClock } from '../clock.ts'
import { base64url, type Random, type Sha256Ctor, timingSafeEqual } from '../crypto.ts'
import type { Database } from '../db/schema.ts'
import { isUuid } from '../http/fields.ts'

/** Name of the session cookie. */
export const SESSION_COOKIE = 'episodic_session'
/** A session lasts 12 hours from sign-in. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60

export interface Session {
  clientId: string
  keyId: string
  expiresAt: Date
}

export interface Sessions {
  /** A cookie value for a key that was just verified. */
  issue(keyId: string, clientId: string): Promise<{ value: string; expiresAt: Date }>
  /** The live session in a cookie value; null when forged, expired, or its key is revoked. */
  verify(value: string | undefined): Promise<Session | null>
}

export interface SessionOptions {
  db: Kysely<Database>
  sha256: Sha256Ctor
  clock: Clock
  /**
   * HMAC key; sessions signed with another secret do not verify. A function
   * is asked once, on the first sign-in or cookie (again if it failed): the
   * key kept in the database, say (`databaseSecret`).
   */
  secret: string | (() => Promise<string>)
}

const KEY_ID = /^[a-z2-7]{12}$/
const encoder = new TextEncoder()

export function createSessions(options: SessionOptions): Sessions {
  const given = options.secret
  let secret: Promise<Uint8Array> | undefined
  const key = (): Promise<Uint8Array> => {
    secret ??= (typeof given === 'string' ? Promise.resolve(given) : given()).then((text) => encoder.encode(text))
    // A database that failed to answer is asked again by the next request.
    secret.catch(() => (secret = undefined))
    return secret
  }

  async function sign(payload: string): Promise<string> {
    const hmac = new options.sha256(await key())
    hmac.update(encoder.encode(payload))
    return base64url(await hmac.digest())
  }

  /** The key still exists, is not revoked and still belongs to the client. */
  async function keyIsLive(keyId: string, clientId: string): Promise<boolean> {
    const row = await options.db
      .selectFrom('api_keys')
      .select(['client_id', 'revoked_at'])
      .where('key_id', '=', keyId)
      .executeTakeFirst()
    return !!row && row.revoked_at === null && row.client_id === clientId
  }

  return {
    async issue(keyId, clientId) {
      const expires = Math.floor(options.clock.now().getTime() / 1000) + SESSION_TTL_SECONDS
      const payload = `v1.${keyId}.${clientId}.${expires}`
      return { value: `${payload}.${await sign(payload)}`, expiresAt: new Date(expires * 1000) }
    },
    async verify(value) {
      const parts = value?.split('.') ?? []
      if (parts.length !== 5 || parts[0] !== 'v1') return null
      const [, keyId, clientId, expires, signature] = parts as [string, string, string, string, string]
      if (!KEY_ID.test(keyId) || !isUuid(clientId) || !/^\d{1,12}$/.test(expires)) return null
      if (!timingSafeEqual(await sign(`v1.${keyId}.${clientId}.${expires}`), signature)) return null
      const expiresAt = new Date(Number(expires) * 1000)
      if (expiresAt.getTime() <= options.clock.now().getTime()) return null
      if (!(await keyIsLive(keyId, clientId))) return null
      return { clientId, keyId, expiresAt }
    },
  }
}

/**
 * A secret kept in the database under `name`: the first instance to ask
 * makes it, every other instance on the same database reads the same one, so
 * a portal session signed by one instance verifies on all (no configuration,
 * no sticky sessions).
 *
 * @example
 * const sessions = createSessions({ db, sha256, clock, secret: () => databaseSecret(db, 'portal_session', webRandom) })
 */
export async function databaseSecret(db: Kysely<Database>, name: string, random: Pick<Random, 'bytes'>, clock: Clock = systemClock): Promise<string> {
  await db.insertInto('service_secrets')
    .values({ name, value: base64url(random.bytes(32)), created_at: clock.now() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow()
  return row.value
}

/** The session cookie's value on this request, if any. */
export function readSessionCookie(c: Context): string | undefined {
  return getCookie(c, SESSION_COOKIE)
}

/**
 * Sets the session cookie: HttpOnly, SameSite=Lax, Secure when the portal is
 * served over https, expiring with the session, on the path the service is
 * mounted at (`root`, e.g. `/episodic`; `''` at the host's root): it covers
 * the portal and the artifact route under /api, and never goes to the host
 * application's other routes or a second episodic under another prefix.
 */
export function setSessionCookie(c: Context, value: string, expiresAt: Date, secure: boolean, root = ''): void {
  // Max-Age (wins over Expires) counts from now: the cookie was just issued.
  setCookie(c, SESSION_COOKIE, value, { httpOnly: true, sameSite: 'Lax', secure, path: root || '/', maxAge: SESSION_TTL_SECONDS, expires: expiresAt })
}

/** Deletes the session cookie in this browser (under a prefix, one an earlier version set on `/` too). */
export function clearSessionCookie(c: Context, secure: boolean, root = ''): void {
  deleteCookie(c, SESSION_COOKIE, { httpOnly: true, sameSite: 'Lax', secure, path: root || '/' })
  if (root) deleteCookie(c, SESSION_COOKIE, { httpOnly: true, sameSite: 'Lax', secure, path: '/' })
}
