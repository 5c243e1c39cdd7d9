/**
 * `GET /api/episodes` with metadata containment filters and a created-at
 * range, over real HTTP on PGlite and (with TEST_DATABASE_URL) PostgreSQL,
 * where the plan is also checked to use the GIN index of 0007_metadata_search.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { DATABASES } from './helpers/databases.ts'
import { call } from './helpers/http.ts'
import { startService, type TestService } from './helpers/service.ts'

for (const kind of DATABASES) {
  describe(`metadata search on ${kind}`, { timeout: 60_000 }, () => {
    let svc: TestService
    let key: string
    const ids: Record<string, string> = {}
    const t0 = Date.now()

    const names = async (query: string, k = key): Promise<string[]> => {
      const reply = await call(`${svc.url}/api/episodes?${query}`, { key: k })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.items.map((e: { name: string }) => e.name).sort()
    }

    beforeAll(async () => {
      svc = await startService(kind)
      key = (await svc.newTenant('searcher')).key
      const rival = (await svc.newTenant('rival')).key
      const open = async (name: string, metadata: Record<string, unknown>, k = key) => {
        const reply = await call(`${svc.url}/api/ingest/episode`, { key: k, body: { name, request_uploads: [], metadata } })
        expect(reply.status, reply.text).toBe(201)
        ids[name] = reply.body.episode_id
      }
      await open('reach-lab2', { task: 'reach', site: 'lab-2', seed: 5, arm: { side: 'left' }, tags: ['slow', 'wet'] })
      svc.advance(3_600_000)
      await open('reach-lab1', { task: 'reach', site: 'lab-1', seed: '5', ok: true })
      svc.advance(3_600_000)
      await open('push-lab2', { task: 'push', site: 'lab-2', seed: 5.0, big: 12345678901234567890 })
      await open('rival-reach', { task: 'reach', site: 'lab-2' }, rival)
    })
    afterAll(() => svc?.close())

    it('ANDs several keys, per client', async () => {
      expect(await names('metadata.task=reach&metadata.site=lab-2')).toEqual(['reach-lab2'])
      expect(await names('metadata.task=reach')).toEqual(['reach-lab1', 'reach-lab2'])
      expect(await names('metadata.site=lab-2&source=real')).toEqual(['push-lab2', 'reach-lab2'])
      expect(await names('metadata.task=nothing')).toEqual([])
    })

    it('takes the same filters through the client library', async () => {
      const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
      const page = await client.listEpisodes({ 'metadata.task': 'reach', 'metadata.site': 'lab-2', created_after: '2020-01-01' })
      expect(page.items.map((e) => e.name)).toEqual(['reach-lab2'])
    })

    it('answers a number beyond PostgreSQL numeric with its text matches, not a 500', async () => {
      expect(await names('metadata.seed=1e999999')).toEqual([])
      expect(await names('metadata.seed=1e-999999')).toEqual([])
    })

    it('matches 5 as number and string, "5" as the string only', async () => {
      expect(await names('metadata.seed=5')).toEqual(['push-lab2', 'reach-lab1', 'reach-lab2'])
      expect(await names('metadata.seed=5.0')).toEqual(['push-lab2', 'reach-lab2'])
      expect(await names(`metadata.seed=${encodeURIComponent('"5"')}`)).toEqual(['reach-lab1'])
      expect(await names('metadata.ok=true')).toEqual(['reach-lab1'])
    })

    it('follows nested paths and arrays', async () => {
      expect(await names('metadata.arm.side=left')).toEqual(['reach-lab2'])
      expect(await names('metadata.tags=wet')).toEqual(['reach-lab2'])
      expect(await names('metadata.arm=left')).toEqual([])
    })

    it('filters on a half-open created-at range', async () => {
      const at = (ms: number) => new Date(t0 + ms).toISOString()
      expect(await names(`created_after=${at(1_800_000)}`)).toEqual(['push-lab2', 'reach-lab1'])
      expect(await names(`created_before=${at(1_800_000)}`)).toEqual(['reach-lab2'])
      expect(await names(`created_after=${at(1_800_000)}&created_before=${at(5_400_000)}&metadata.task=reach`)).toEqual(['reach-lab1'])
      const first = (await call(`${svc.url}/api/episodes/${ids['reach-lab2']}`, { key })).body.created_at
      expect(await names(`created_after=${encodeURIComponent(first)}&created_before=${at(1_800_000)}`)).toEqual(['reach-lab2'])
      expect(await names(`created_before=${encodeURIComponent(first)}`)).toEqual([])
    })

    it('pages through filtered results with the cursor', async () => {
      const page = await call(`${svc.url}/api/episodes?metadata.site=lab-2&limit=1`, { key })
      expect(page.body.items.map((e: { name: string }) => e.name)).toEqual(['push-lab2'])
      const next = await call(`${svc.url}/api/episodes?metadata.site=lab-2&limit=1&cursor=${page.body.next_cursor}`, { key })
      expect(next.body.items.map((e: { name: string }) => e.name)).toEqual(['reach-lab2'])
      expect(next.body.next_cursor).toBeNull()
    })

    it('answers 400 naming the parameter for a bad filter', async () => {
      for (
        const [query, message] of [
          ['metadata.=x', 'metadata.: is not a metadata key path'],
          ['metadata.a=%00', 'metadata.a: must not contain \\u0000'],
          // JSON escapes inside a quoted value spell the same; jsonb refuses both (was a 500).
          ['metadata.a=%22%5Cu0000%22', 'metadata.a: must not contain \\u0000'],
          ['metadata.a=%22%5Cud800%22', 'metadata.a: must not contain an unpaired UTF-16 surrogate'],
          ['created_after=yesterday', 'created_after: must be an ISO 8601 date'],
          ['created_before=2026-02-31', 'created_before: must be an ISO 8601 date'],
          ['metadatax=1', 'unknown'],
        ] as const
      ) {
        const reply = await call(`${svc.url}/api/episodes?${query}`, { key })
        expect(reply.status, query).toBe(400)
        expect(reply.body.error, query).toContain(message)
      }
    })

    if (kind === 'postgres') {
      it('uses the GIN index for containment', async () => {
        const db = svc.app.deps.db
        const plan = await db.connection().execute(async (conn) => {
          await sql`set enable_seqscan = off`.execute(conn)
          const rows = await sql<{ 'QUERY PLAN': string }>`explain select id from episodes where metadata @> cast(${'{"task":"reach"}'} as jsonb)`.execute(conn)
          await sql`reset enable_seqscan`.execute(conn)
          return rows.rows.map((r) => r['QUERY PLAN']).join('\n')
        })
        expect(plan).toContain('episodes_metadata')
      })
    }
  })
}
