/**
 * The receiver of docs/webhooks.md (examples/webhooks/receiver.mjs) run as a
 * user runs it, fed by the real delivery code: it accepts a delivery signed
 * with its secret, handles a retry of the same id once, and refuses a forged one.
 */
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { createClient } from '../src/admin/admin.ts'
import type { Database } from '../src/db/schema.ts'
import { deliverWebhooks } from '../src/webhooks/deliver.ts'
import { addWebhook } from '../src/webhooks/endpoints.ts'
import { signedHeaders } from '../src/webhooks/signature.ts'
import type { Kysely } from 'kysely'
import { openTestDatabase } from './helpers/pglite.ts'
import { finalizedRun } from './helpers/webhooks.ts'

const RECEIVER = resolve(import.meta.dirname, '../examples/webhooks/receiver.mjs')
let db: Kysely<Database>

beforeAll(async () => {
  db = await openTestDatabase()
})
afterAll(() => db?.destroy())

it('the documented receiver verifies deliveries with standardwebhooks', async () => {
  const client = await createClient({ db, sha256: NodeSha256 }, 'ci')
  const added = await addWebhook({ db }, 'ci', 'http://127.0.0.1:8001/placeholder')
  const child = spawn(process.execPath, [RECEIVER], { env: { ...process.env, EPISODIC_WEBHOOK_SECRET: added.secret, PORT: '0' } })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  try {
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on('data', () => {
        const m = /listening on (\S+)/.exec(out)
        if (m) done(m[1]!)
      })
      child.on('exit', () => fail(new Error(`receiver exited:\n${out}`)))
    })
    await db.updateTable('webhook_endpoints').set({ url: `${url}/episodic` }).where('id', '=', added.webhook_id).execute()

    const { runId, summary } = await finalizedRun(db, client.id, { name: 'nightly', candidatePolicyVersion: 'pi-v7', baselinePolicyVersion: null })

    expect(await deliverWebhooks({ db, fetch })).toMatchObject({ attempted: 1, delivered: 1 })
    const line = `eval_run.completed: nightly (pi-v7) -> ${summary.recommend} [${runId}]`
    await expect.poll(() => out, { timeout: 60_000 }).toContain(line)

    // A retry (same id, signed afresh) is acknowledged and not handled twice.
    const row = await db.selectFrom('webhook_deliveries').select(['id', 'payload']).executeTakeFirstOrThrow()
    const retry = await fetch(`${url}/episodic`, {
      method: 'POST',
      headers: await signedHeaders(added.secret, row.id, new Date(), row.payload),
      body: row.payload,
    })
    expect(retry.status).toBe(204)
    // A forged body under the real headers is refused.
    const headers = await signedHeaders(added.secret, row.id, new Date(), row.payload)
    const forged = await fetch(`${url}/episodic`, { method: 'POST', headers, body: row.payload.replace('nightly', 'forged') })
    expect(forged.status).toBe(400)
    expect(out.split(line).length - 1).toBe(1)
  } finally {
    child.kill()
  }
}, 120_000)
