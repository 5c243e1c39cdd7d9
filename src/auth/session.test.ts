import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createKey, revokeKey } from '../admin/admin.ts'
import { Sha256 } from '@aws-crypto/sha256-js'
import type { Sha256Ctor } from '../crypto.ts'
import type { Kysely } from 'kysely'
import { readConfig } from '../config.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import type { Database } from '../db/schema.ts'
import { createSessions, databaseSecret, SESSION_TTL_SECONDS } from './session.ts'

const sha256 = Sha256 as unknown as Sha256Ctor
let db: Kysely<Database>
let now = Date.parse('2030-01-01T00:00:00Z')
const clock = { now: () => new Date(now) }

beforeAll(async () => {
  db = await openTestDatabase()
})
afterAll(() => db.destroy())

async function key(name: string) {
  const client = await createClient({ db, sha256 }, name)
  const minted = await createKey({ db, sha256 }, name)
  return { clientId: client.id, keyId: minted.key_id }
}

describe('sessions', () => {
  it('verify what they issued until expiry', async () => {
    const sessions = createSessions({ db, sha256, clock, secret: 'one-secret' })
    const k = await key('alpha')
    const { value, expiresAt } = await sessions.issue(k.keyId, k.clientId)
    expect(expiresAt.getTime()).toBe(now + SESSION_TTL_SECONDS * 1000)
    expect(await sessions.verify(value)).toEqual({ clientId: k.clientId, keyId: k.keyId, expiresAt })
    now += SESSION_TTL_SECONDS * 1000 - 1000
    expect(await sessions.verify(value)).not.toBeNull()
    now += 1000
    expect(await sessions.verify(value)).toBeNull()
  })

  it('refuse another secret, edits, and malformed values', async () => {
    const sessions = createSessions({ db, sha256, clock, secret: 'one-secret' })
    const other = createSessions({ db, sha256, clock, secret: 'another-secret' })
    const a = await key('beta')
    const b = await key('gamma')
    const { value } = await sessions.issue(a.keyId, a.clientId)
    expect(await other.verify(value)).toBeNull()
    const parts = value.split('.')
    const swapped = [parts[0], parts[1], b.clientId, parts[3], parts[4]].join('.')
    expect(await sessions.verify(swapped)).toBeNull()
    for (const bad of [undefined, '', 'v1', `v2.${parts.slice(1).join('.')}`, `${value}.x`, value.slice(0, -1), parts.slice(0, 4).join('.') + '.']) {
      expect(await sessions.verify(bad)).toBeNull()
    }
  })

  it('end when the key is revoked, or when the key is not the client’s', async () => {
    const sessions = createSessions({ db, sha256, clock, secret: 'one-secret' })
    const a = await key('delta')
    const b = await key('epsilon')
    const mismatched = await sessions.issue(a.keyId, b.clientId) // only a forger could make this
    expect(await sessions.verify(mismatched.value)).toBeNull()
    const { value } = await sessions.issue(a.keyId, a.clientId)
    expect(await sessions.verify(value)).not.toBeNull()
    await revokeKey({ db, sha256 }, a.keyId)
    expect(await sessions.verify(value)).toBeNull()
  })
})

describe('the session key kept in the database', () => {
  it('is made once and shared: a session one instance signs verifies on another on the same database', async () => {
    let made = 0
    const random = { bytes: (n: number) => (made++, crypto.getRandomValues(new Uint8Array(n))) }
    const secret = () => databaseSecret(db, 'portal_session_test', random)
    const a = createSessions({ db, sha256, clock, secret })
    const b = createSessions({ db, sha256, clock, secret })
    const k = await key('zeta')
    const { value } = await a.issue(k.keyId, k.clientId)
    expect(await b.verify(value)).toMatchObject({ keyId: k.keyId })
    // Two instances asking at once still end up with one key.
    const [x, y] = await Promise.all([secret(), secret()])
    expect(x).toBe(y)
    expect(await db.selectFrom('service_secrets').select('value').where('name', '=', 'portal_session_test').execute()).toEqual([{ value: x }])
    expect(made).toBeGreaterThan(0)
  })

  it('is asked again after a failure rather than failing every request after', async () => {
    let calls = 0
    const sessions = createSessions({
      db,
      sha256,
      clock,
      secret: () => (++calls === 1 ? Promise.reject(new Error('database down')) : Promise.resolve('the-key')),
    })
    const k = await key('eta')
    await expect(sessions.issue(k.keyId, k.clientId)).rejects.toThrow('database down')
    const { value } = await sessions.issue(k.keyId, k.clientId)
    expect(await sessions.verify(value)).not.toBeNull()
    expect(calls).toBe(2)
  })
})

describe('EPISODIC_SESSION_SECRET', () => {
  it('is read from the environment and must be long enough', () => {
    expect(readConfig({}).sessionSecret).toBeUndefined()
    expect(readConfig({ EPISODIC_SESSION_SECRET: 'x'.repeat(32) }).sessionSecret).toBe('x'.repeat(32))
    expect(() => readConfig({ EPISODIC_SESSION_SECRET: 'short' })).toThrow('EPISODIC_SESSION_SECRET must be at least 32 characters')
  })
})
