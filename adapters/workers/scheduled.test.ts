/**
 * The Worker's Cron Trigger handler, called directly in Node on PostgreSQL:
 * it sends the queued eval_run.completed deliveries (checked by the reference
 * verifier) and records them, as the servers' timer does.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createClient } from '../../src/admin/admin.ts'
import { openDatabase } from '../../src/db/open.ts'
import { addWebhook } from '../../src/webhooks/endpoints.ts'
import { createTempDatabase, postgresAvailable } from '../../test/helpers/postgres.ts'
import { finalizedRun, startVerifyingReceiver } from '../../test/helpers/webhooks.ts'
import { NodeSha256 } from '../node/sha256.ts'
import { createWorker } from './index.ts'

const withPostgres = postgresAvailable() ? it : it.skip
let temp: Awaited<ReturnType<typeof createTempDatabase>> | undefined
const pending: Promise<unknown>[] = []
const ctx = { waitUntil: (promise: Promise<unknown>) => void pending.push(promise) }

beforeAll(async () => {
  if (postgresAvailable()) temp = await createTempDatabase()
})
afterAll(async () => {
  await Promise.allSettled(pending)
  await temp?.drop()
})

it('logs a configuration error instead of throwing from the Cron Trigger', async () => {
  const logged: unknown[] = []
  const worker = createWorker({ overrides: { logger: { error: (_message, error) => logged.push(error) } } })
  await expect(worker.scheduled({}, {}, ctx)).resolves.toBeUndefined()
  expect(String((logged[0] as Error).message)).toMatch(/no database/)
})

withPostgres('the scheduled handler delivers queued webhooks', async () => {
  const receiver = await startVerifyingReceiver(204)
  const { received } = receiver
  try {
    const db = await openDatabase({ url: temp!.url, max: 2 })
    const client = await createClient({ db, sha256: NodeSha256 }, 'ci')
    receiver.secret = (await addWebhook({ db }, 'ci', `${receiver.url}/hook`)).secret
    const { runId } = await finalizedRun(db, client.id, { name: 'cron', candidatePolicyVersion: 'v2', baselinePolicyVersion: null })

    const worker = createWorker({ overrides: { logger: { error: (message, error) => received.push({ verified: false, body: { message, error } }) } } })
    await worker.scheduled({}, { DATABASE_URL: temp!.url, EPISODIC_STORAGE: 'none' }, ctx)
    expect(received).toHaveLength(1)
    expect(received[0]).toMatchObject({ verified: true, body: { type: 'eval_run.completed', data: { eval_run_id: runId, name: 'cron' } } })
    const row = await db.selectFrom('webhook_deliveries').select(['status', 'attempts', 'last_status']).executeTakeFirstOrThrow()
    expect(row).toEqual({ status: 'delivered', attempts: 1, last_status: 204 })
    // Nothing left: the next trigger sends nothing.
    await worker.scheduled({}, { DATABASE_URL: temp!.url, EPISODIC_STORAGE: 'none' }, ctx)
    expect(received).toHaveLength(1)
    await db.destroy()
  } finally {
    receiver.close()
  }
})
