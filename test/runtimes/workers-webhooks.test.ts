/**
 * Webhooks on Cloudflare Workers for real: examples/workers bundled and run in
 * workerd through Miniflare on PostgreSQL; its Cron Trigger (the `crons` of
 * examples/workers/wrangler.toml) sends the queued eval_run.completed, which a
 * receiver here checks with the reference verifier (`standardwebhooks`).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { createClient } from '../../src/admin/admin.ts'
import { openDatabase } from '../../src/db/open.ts'
import { addWebhook } from '../../src/webhooks/endpoints.ts'
import { createTempDatabase, postgresAvailable } from '../helpers/postgres.ts'
import { finalizedRun, startVerifyingReceiver } from '../helpers/webhooks.ts'
import { bundleWorker, ROOT, wranglerSettings } from './harness.ts'

const run = postgresAvailable() ? describe : describe.skip

run('webhooks on workers (PostgreSQL)', () => {
  let temp: Awaited<ReturnType<typeof createTempDatabase>>
  beforeAll(async () => (temp = await createTempDatabase()), 90_000)
  afterAll(() => temp?.drop())

  it('the Cron Trigger sends a signed eval_run.completed', async () => {
    const cron = /^crons\s*=\s*\[\s*"([^"]+)"/m.exec(readFileSync(join(ROOT, 'examples/workers/wrangler.toml'), 'utf8'))?.[1]
    expect(cron, 'examples/workers/wrangler.toml has a Cron Trigger').toBeDefined()

    const receiver = await startVerifyingReceiver(200)
    const { received } = receiver
    const db = await openDatabase({ url: temp.url, max: 2 })
    const { Miniflare } = await import('miniflare')
    const settings = wranglerSettings()
    const mf = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.js', contents: await bundleWorker() }],
      compatibilityDate: settings.compatibilityDate,
      compatibilityFlags: settings.compatibilityFlags,
      bindings: { DATABASE_URL: temp.url, EPISODIC_STORAGE: 'none' },
    })
    try {
      const client = await createClient({ db, sha256: NodeSha256 }, 'ci')
      receiver.secret = (await addWebhook({ db }, 'ci', `${receiver.url}/hook`)).secret
      const { runId } = await finalizedRun(db, client.id, { name: 'edge', candidatePolicyVersion: 'v2', baselinePolicyVersion: 'v1' })

      // Miniflare's documented way to dispatch a scheduled event (its Fetcher type here lacks it).
      const worker = (await mf.getWorker()) as unknown as { scheduled(event: { cron: string; scheduledTime: Date }): Promise<unknown> }
      await worker.scheduled({ cron: cron!, scheduledTime: new Date() })
      expect(received).toEqual([{
        verified: true,
        body: expect.objectContaining({ type: 'eval_run.completed', data: expect.objectContaining({ eval_run_id: runId, name: 'edge' }) }),
      }])
      const row = await db.selectFrom('webhook_deliveries').select(['status', 'attempts']).executeTakeFirstOrThrow()
      expect(row).toEqual({ status: 'delivered', attempts: 1 })
    } finally {
      await mf.dispose()
      await db.destroy()
      receiver.close()
    }
  }, 180_000)
})
