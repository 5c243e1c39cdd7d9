import { describe, expect, it } from 'vitest'
import { createTempDatabase, postgresAvailable, TEST_DATABASE_URL } from '../../test/helpers/postgres.ts'
import { createPostgresSql } from './postgres-js.ts'
import { postgresRevocations, REVOCATION_CHANNEL } from './notify.ts'

describe.skipIf(!postgresAvailable())('postgresRevocations on the real server', () => {
  it('hears revocations, and hears them again after the server ended its session', async () => {
    const temp = await createTempDatabase()
    const name = new URL(temp.url).pathname.slice(1)
    const other = createPostgresSql(temp.url, { max: 1 })
    const admin = createPostgresSql(TEST_DATABASE_URL!, { max: 1 })
    const heard: string[] = []
    const stop = await postgresRevocations(temp.url).listen((keyId) => heard.push(keyId))
    /** NOTIFYs `keyId` every 100 ms until the listener hears it; fails after 10 s. */
    const revokeUntilHeard = async (keyId: string) => {
      for (const started = Date.now(); !heard.includes(keyId);) {
        if (Date.now() - started > 10_000) throw new Error(`${keyId}: not heard within 10 s`)
        await other.unsafe('select pg_notify($1, $2)', [REVOCATION_CHANNEL, keyId], { prepare: true })
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    try {
      await revokeUntilHeard('key-before')
      for (const round of [1, 2, 3]) {
        const [row] = await admin.unsafe(
          'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and query ilike $2 and pid <> pg_backend_pid()',
          [name, `%listen%${REVOCATION_CHANNEL}%`],
          { prepare: true },
        )
        expect((row as unknown as { n: number }).n).toBe(1)
        await revokeUntilHeard(`key-after-kill-${round}`)
      }
    } finally {
      await stop()
      await other.end()
      await admin.end()
      await temp.drop()
    }
  }, 60_000)
})
