/**
 * Resolves the calling client from an API key given as `Authorization: Bearer
 * <key>` or `X-Service-Key: <key>`. Every failure (missing, malformed,
 * unknown, wrong secret, revoked) is the same `unauthorized` error, so the
 * response never tells which it was.
 *
 * Verified keys can be cached for `cacheMs` to save a query per request (the
 * ingest hot path is database-bound: see bench/ingest.ts). Revocation still
 * takes effect at once where the server hears of it: the control socket on
 * the embedded database, LISTEN/NOTIFY on PostgreSQL (src/db/notify.ts);
 * elsewhere the TTL bounds it. Off by default in `createApp`; `episodic
 * serve` uses 5 s (EPISODIC_AUTH_CACHE_MS).
 *
 * With the cache on, a key is looked up once however many requests present
 * it at the same moment (a cold start, or 50 clients on one key when its
 * entry expires would otherwise send 50 identical queries), and an entry in
 * the last fifth of its life is refreshed in the background while it still
 * answers, so under steady use no request waits for the lookup. An entry is
 * never used past its TTL, and a revocation heard while a lookup is in
 * flight keeps that lookup's answer out of the cache.
 *
 * With the cache on, unknown key ids are cached too (for the same TTL, in a
 * bounded least-recently-used cache of `negativeCacheSize` ids, so a flood of
 * random ids cannot grow memory): an unknown id then costs what a known id
 * with a wrong secret costs, a hash and a comparison, instead of a query per
 * request that would tell a caller which ids exist.
 */
import type { Kysely } from 'kysely'
import { type Sha256Ctor, sha256Hex, timingSafeEqual } from '../crypto.ts'
import type { Database } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import { BoundedCache } from './bounded-cache.ts'
import { parseApiKey } from './keys.ts'

export interface AuthenticatorOptions {
  db: Kysely<Database>
  sha256: Sha256Ctor
  now: () => number
  cacheMs?: number
  /** Unknown key ids remembered at most (default 10,000; only with `cacheMs`). */
  negativeCacheSize?: number
}

export interface Authenticator {
  /** The client id that owns the key in these headers, or throws unauthorized. */
  authenticate(headers: Headers): Promise<string>
  /** Drops a key from the cache (called after revoking). */
  forget(keyId: string): void
  /** True when verified keys are cached (then revocations must be forwarded). */
  readonly caching: boolean
}

interface CachedKey {
  clientId: string
  secretSha256: string
  revoked: boolean
  expires: number
}

const UNAUTHORIZED = 'missing or invalid API key'

/**
 * Extracts the presented key from either header. When both are sent they must
 * carry the same key: two different keys (another client's, or a bad one
 * beside a good one) are refused rather than letting one silently win. An
 * `Authorization` of another scheme (`Basic`, from a proxy's own gate, say)
 * is not ours to read: beside `X-Service-Key` the latter decides; alone it is
 * no key at all.
 */
export function presentedKey(headers: Headers): string | null {
  const authorization = headers.get('authorization')?.trim()
  const serviceKey = headers.get('x-service-key')?.trim() || null
  if (authorization && BEARER.test(authorization)) {
    const match = /^Bearer[ \t]+(\S+)$/i.exec(authorization)
    if (!match) return null
    return serviceKey === null || serviceKey === match[1] ? match[1]! : null
  }
  return serviceKey
}

const BEARER = /^Bearer(?:[ \t]|$)/i

/** Whether the request offers an API key at all (a Bearer `Authorization` or `X-Service-Key`), rather than a session. */
export function offersKey(headers: Headers): boolean {
  return BEARER.test(headers.get('authorization')?.trim() ?? '') || headers.has('x-service-key')
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const cache = new Map<string, CachedKey>()
  const cacheMs = options.cacheMs ?? 0
  /** Unknown key id -> when that answer expires. */
  const unknown = new BoundedCache<number>(options.negativeCacheSize ?? 10_000)
  /** Lookups under way, by key id (only with the cache on). */
  const inFlight = new Map<string, Promise<CachedKey | null>>()
  /** Bumped by every `forget`: a lookup begun before it must not fill the cache. */
  let forgets = 0

  async function query(keyId: string): Promise<CachedKey | null> {
    const begun = forgets
    const row = await options.db
      .selectFrom('api_keys')
      .select(['client_id', 'secret_sha256', 'revoked_at'])
      .where('key_id', '=', keyId)
      .executeTakeFirst()
    if (!row) {
      if (cacheMs > 0 && begun === forgets) unknown.set(keyId, options.now() + cacheMs)
      return null
    }
    const entry = {
      clientId: row.client_id,
      secretSha256: row.secret_sha256,
      revoked: row.revoked_at !== null,
      expires: options.now() + cacheMs,
    }
    if (cacheMs > 0 && begun === forgets) cache.set(keyId, entry)
    return entry
  }

  /** One query per key id at a time, shared by everyone asking meanwhile. */
  function shared(keyId: string): Promise<CachedKey | null> {
    let pending = inFlight.get(keyId)
    if (pending === undefined) {
      pending = query(keyId).finally(() => {
        if (inFlight.get(keyId) === pending) inFlight.delete(keyId)
      })
      inFlight.set(keyId, pending)
    }
    return pending
  }

  async function lookup(keyId: string): Promise<CachedKey | null> {
    // Without a cache every request reads the row itself: a revocation applies to the next request.
    if (cacheMs <= 0) return await query(keyId)
    const now = options.now()
    const missing = unknown.get(keyId)
    if (missing !== undefined) {
      if (missing > now) return null
      unknown.delete(keyId)
    }
    const hit = cache.get(keyId)
    if (hit === undefined || hit.expires <= now) return shared(keyId)
    if (hit.expires - now < cacheMs / 5 && !inFlight.has(keyId)) {
      // Refresh ahead; a failure here only means the next request after expiry looks it up itself.
      shared(keyId).catch(() => {})
    }
    return hit
  }

  return {
    async authenticate(headers) {
      const parsed = parseApiKey(presentedKey(headers) ?? '')
      if (!parsed) throw new EpisodicError('unauthorized', UNAUTHORIZED)
      const [entry, hash] = await Promise.all([lookup(parsed.keyId), sha256Hex(options.sha256, parsed.secret)])
      // Compare even when the key is unknown so timing does not reveal which ids exist.
      const matches = timingSafeEqual(hash, entry?.secretSha256 ?? '0'.repeat(64))
      if (!entry || !matches || entry.revoked) throw new EpisodicError('unauthorized', UNAUTHORIZED)
      return entry.clientId
    },
    forget(keyId) {
      forgets++
      cache.delete(keyId)
      unknown.delete(keyId)
      inFlight.delete(keyId)
    },
    caching: cacheMs > 0,
  }
}
