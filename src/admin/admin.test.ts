import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Sha256 } from '@aws-crypto/sha256-js'
import type { Kysely } from 'kysely'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import type { Sha256Ctor } from '../crypto.ts'
import type { Database } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import { createClient, createKey, listKeys, revokeKey } from './admin.ts'

const sha256 = Sha256 as unknown as Sha256Ctor
let db: Kysely<Database>

beforeAll(async () => {
  db = await openTestDatabase()
})
afterAll(() => db.destroy())

describe('revokeKey', () => {
  it("with a client, revokes only that client's key and names the owner otherwise", async () => {
    for (const name of ['north', 'south']) await createClient({ db, sha256 }, name)
    const northKey = await createKey({ db, sha256 }, 'north')
    const refused = await revokeKey({ db, sha256 }, northKey.key_id, 'south').catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(EpisodicError)
    expect(refused).toMatchObject({ code: 'not_found', message: `key "${northKey.key_id}" is not a key of client "south" (it is "north"'s); nothing revoked` })
    expect((await listKeys({ db, sha256 }, 'north'))[0]!.revoked_at).toBeNull()

    expect((await revokeKey({ db, sha256 }, northKey.key_id, 'north')).revoked_at).not.toBeNull()
    const southKey = await createKey({ db, sha256 }, 'south')
    expect((await revokeKey({ db, sha256 }, southKey.key_id)).client).toBe('south')
    await expect(revokeKey({ db, sha256 }, 'aaaaaaaaaaaa', 'south')).rejects.toThrow('no key with id "aaaaaaaaaaaa"')
  })
})
