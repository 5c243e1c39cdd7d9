import { Kysely, type LogEvent } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { createClient, createKey, revokeKey } from '../admin/admin.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { pgliteDialect } from '../db/pglite.ts'
import type { Database } from '../db/schema.ts'
import { createAuthenticator } from './authenticate.ts'
import { openTestPGlite } from '../../test/helpers/pglite.ts'

let db: Kysely<Database>
/** Key lookups the authenticator sent since the last reset. */
let lookups = 0
let key: string
let clientId: string
let clock = 0

const headers = (presented = key) => new Headers({ authorization: `Bearer ${presented}` })
const cached = (cacheMs: number) => createAuthenticator({ db, sha256: NodeSha256, now: () => clock, cacheMs })

beforeAll(async () => {
  const log = (event: LogEvent) =>
    void (event.level === 'query' && /^select "client_id", "secret_sha256", "revoked_at" from "api_keys"/.test(event.query.sql) && lookups++)
  db = new Kysely<Database>({ dialect: pgliteDialect(await openTestPGlite()), log })
  await migrateToLatest(db)
  clientId = (await createClient({ db, sha256: NodeSha256 }, 'acme')).id
  const minted = await createKey({ db, sha256: NodeSha256 }, 'acme')
  key = minted.key
})

afterAll(() => db.destroy())

beforeEach(() => {
  lookups = 0
  clock = 1_000_000
})

describe('authenticator with a key cache', () => {
  it('looks a key up once for all the requests that present it at the same moment', async () => {
    const auth = cached(5000)
    const ids = await Promise.all(Array.from({ length: 50 }, () => auth.authenticate(headers())))
    expect(ids).toEqual(Array(50).fill(clientId))
    expect(lookups).toBe(1)
    await auth.authenticate(headers())
    expect(lookups).toBe(1) // cached
  })

  it('looks up again once the entry expires, and once for everyone waiting', async () => {
    const auth = cached(5000)
    await auth.authenticate(headers())
    clock += 5000
    await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(headers())))
    expect(lookups).toBe(2)
  })

  it('refreshes an entry in the last fifth of its life in the background, answering from it meanwhile', async () => {
    const auth = cached(5000)
    await auth.authenticate(headers())
    clock += 4200 // 800 ms left: refresh ahead
    const answers = await Promise.all(Array.from({ length: 10 }, () => auth.authenticate(headers())))
    expect(answers).toEqual(Array(10).fill(clientId))
    await vi.waitFor(() => expect(lookups).toBeGreaterThanOrEqual(2)) // the background lookup lands
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(lookups).toBe(2) // one refresh, not one per request
    clock += 4000 // past the first entry's expiry, within the refreshed one's
    await auth.authenticate(headers())
    expect(lookups).toBe(2)
  })

  it('still refuses a wrong secret for a cached key', async () => {
    const auth = cached(5000)
    await auth.authenticate(headers())
    const wrong = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA')
    await expect(auth.authenticate(headers(wrong))).rejects.toMatchObject({ code: 'unauthorized' })
  })

  it('keeps a lookup that a revocation overtook out of the cache', async () => {
    const auth = cached(60_000)
    const other = await createKey({ db, sha256: NodeSha256 }, 'acme')
    const inFlight = auth.authenticate(headers(other.key)) // reads the row before the revocation lands
    auth.forget(other.key_id)
    await revokeKey({ db, sha256: NodeSha256 }, other.key_id)
    await inFlight
    // Without the guard the pre-revocation answer would now be cached for a minute.
    await expect(auth.authenticate(headers(other.key))).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookups).toBe(2)
  })

  it('never uses an entry past its lifetime, even when a revocation was not heard', async () => {
    const auth = cached(5000)
    const other = await createKey({ db, sha256: NodeSha256 }, 'acme')
    await auth.authenticate(headers(other.key))
    await revokeKey({ db, sha256: NodeSha256 }, other.key_id) // not forwarded with forget()
    await expect(auth.authenticate(headers(other.key))).resolves.toBe(clientId) // within the TTL
    clock += 5000
    await expect(auth.authenticate(headers(other.key))).rejects.toMatchObject({ code: 'unauthorized' })
  })
})

describe('authenticator without a cache', () => {
  it('reads the row for every request, so a revocation applies to the very next one', async () => {
    const auth = cached(0)
    expect(auth.caching).toBe(false)
    await Promise.all([auth.authenticate(headers()), auth.authenticate(headers()), auth.authenticate(headers())])
    expect(lookups).toBe(3)
    const other = await createKey({ db, sha256: NodeSha256 }, 'acme')
    await auth.authenticate(headers(other.key))
    await revokeKey({ db, sha256: NodeSha256 }, other.key_id)
    await expect(auth.authenticate(headers(other.key))).rejects.toMatchObject({ code: 'unauthorized' })
  })
})

describe('authenticator with unknown key ids', () => {
  const letters = 'abcdefghijklmnop'
  const randomKey = (i: number) => `epk_yyyyyyyyyy${letters[(i >> 4) & 15]}${letters[i & 15]}_${'A'.repeat(43)}`
  const unknownKey = `epk_zzzzzzzzzzzz_${'B'.repeat(43)}`

  it('looks an unknown id up once per TTL, as a known id with a wrong secret', async () => {
    const auth = cached(5000)
    for (let i = 0; i < 5; i++) await expect(auth.authenticate(headers(unknownKey))).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookups).toBe(1)
    const wrongSecret = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA')
    for (let i = 0; i < 5; i++) await expect(auth.authenticate(headers(wrongSecret))).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookups).toBe(2)
    clock += 5000
    await expect(auth.authenticate(headers(unknownKey))).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookups).toBe(3)
  })

  it('keeps memory bounded under a flood of random ids', async () => {
    const { BoundedCache } = await import('./bounded-cache.ts')
    const cache = new BoundedCache<number>(3)
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, i)
    expect(cache.size).toBe(3)
    expect(cache.get('k9')).toBe(9)
    expect(cache.get('k0')).toBeUndefined()
    const auth = createAuthenticator({ db, sha256: NodeSha256, now: () => clock, cacheMs: 5000, negativeCacheSize: 4 })
    for (let i = 0; i < 12; i++) await expect(auth.authenticate(headers(randomKey(i)))).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookups).toBe(12)
    // The oldest ids were dropped: asking again queries; the newest are still remembered.
    await expect(auth.authenticate(headers(randomKey(11)))).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookups).toBe(12)
    await expect(auth.authenticate(headers(randomKey(0)))).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookups).toBe(13)
  })

  it('accepts a key created after its id was refused once forget() tells of it', async () => {
    const auth = cached(5000)
    const minted = await createKey({ db, sha256: NodeSha256 }, 'acme')
    await auth.authenticate(headers(minted.key))
    expect(lookups).toBe(1)
    await revokeKey({ db, sha256: NodeSha256 }, minted.key_id)
    auth.forget(minted.key_id)
    await expect(auth.authenticate(headers(minted.key))).rejects.toMatchObject({ code: 'unauthorized' })
  })
})

describe('authenticator with both key headers', () => {
  const auth = () => createAuthenticator({ db, sha256: NodeSha256, now: () => clock })
  const both = (bearer: string, service: string) => new Headers({ authorization: `Bearer ${bearer}`, 'x-service-key': service })

  it('accepts the same key in both, with surrounding whitespace', async () => {
    expect(await auth().authenticate(both(key, ` ${key} `))).toBe(clientId)
    expect(await auth().authenticate(new Headers({ 'x-service-key': key }))).toBe(clientId)
  })

  it("reads X-Service-Key beside an Authorization of another scheme (a proxy's Basic gate), which alone is no key", async () => {
    const headers = new Headers({ authorization: 'Basic dXNlcjpwYXNz', 'x-service-key': key })
    expect(await auth().authenticate(headers)).toBe(clientId)
    await expect(auth().authenticate(new Headers({ authorization: `Basic ${key}` }))).rejects.toMatchObject({ code: 'unauthorized' })
    // A Bearer header that carries nothing is still a (bad) key, not another scheme.
    await expect(auth().authenticate(new Headers({ authorization: 'Bearer', 'x-service-key': key }))).rejects.toMatchObject({ code: 'unauthorized' })
  })

  it('refuses two different keys, even when each is valid: neither silently wins', async () => {
    const second = (await createKey({ db, sha256: NodeSha256 }, 'acme')).key
    await createClient({ db, sha256: NodeSha256 }, 'other-tenant')
    const foreign = (await createKey({ db, sha256: NodeSha256 }, 'other-tenant')).key
    for (const [bearer, service] of [[key, foreign], [foreign, key], [key, second], [key, 'epk_bad'], ['epk_bad', key]] as const) {
      await expect(auth().authenticate(both(bearer, service))).rejects.toMatchObject({ code: 'unauthorized' })
    }
  })
})
