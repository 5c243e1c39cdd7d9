/**
 * `GET /api/eval-runs` filters for trends: candidate and baseline versions,
 * a half-open created-at range and `baselines_of` (runs over the same set of
 * baseline episodes), on PGlite and (with TEST_DATABASE_URL) PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATABASES } from './helpers/databases.ts'
import { call } from './helpers/http.ts'
import { startService, type TestService } from './helpers/service.ts'

for (const kind of DATABASES) {
  describe(`eval-run filters on ${kind}`, { timeout: 60_000 }, () => {
    let svc: TestService
    let key: string
    let rival: string
    const t0 = Date.now()
    const runs: Record<string, string> = {}
    let rivalRun: string

    const post = async (path: string, body: unknown, k = key) => {
      const reply = await call(`${svc.url}${path}`, { key: k, body })
      expect(reply.status, reply.text).toBeLessThan(300)
      return reply.body
    }
    const names = async (query: string, k = key): Promise<string[]> => {
      const reply = await call(`${svc.url}/api/eval-runs?${query}`, { key: k })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.items.map((r: { name: string }) => r.name)
    }

    beforeAll(async () => {
      svc = await startService(kind)
      key = (await svc.newTenant()).key
      rival = (await svc.newTenant()).key
      const episode = async (k = key) => (await post('/api/ingest/episode', { request_uploads: [] }, k)).episode_id as string
      const [a, b, c] = [await episode(), await episode(), await episode()]
      const run = async (name: string, candidate: string, baseline: string | null, ids: string[]) => {
        runs[name] =
          (await post('/api/ingest/eval-run', { name, candidate_policy_version: candidate, baseline_policy_version: baseline, baseline_episode_ids: ids }))
            .eval_run_id
        svc.advance(3_600_000)
      }
      await run('r1', 'v2', 'v1', [a, b])
      await run('r2', 'v3', 'v1', [b, a])
      await run('r3', 'v3', 'v1', [a, b, c])
      await run('r4', 'v4', null, [a, b])
      rivalRun = (await post(
        '/api/ingest/eval-run',
        { candidate_policy_version: 'v3', baseline_policy_version: 'v1', baseline_episode_ids: [await episode(rival)] },
        rival,
      )).eval_run_id
    })
    afterAll(() => svc?.close())

    it('filters on the policy versions, per client', async () => {
      expect(await names('baseline_policy_version=v1')).toEqual(['r3', 'r2', 'r1'])
      expect(await names('baseline_policy_version=v1&candidate_policy_version=v3')).toEqual(['r3', 'r2'])
      expect(await names('candidate_policy_version=v4')).toEqual(['r4'])
      expect(await names('baseline_policy_version=v9')).toEqual([])
    })

    it('filters on a half-open time range', async () => {
      const at = (h: number) => new Date(t0 + h * 3_600_000).toISOString()
      expect(await names(`created_after=${at(0.5)}&created_before=${at(2.5)}`)).toEqual(['r3', 'r2'])
      expect(await names(`created_before=${at(0.5)}`)).toEqual(['r1'])
      expect((await call(`${svc.url}/api/eval-runs?created_after=soon`, { key })).body.error).toContain('created_after: must be an ISO 8601 date')
    })

    it('finds the runs over the same set of baseline episodes, in any order', async () => {
      expect(await names(`baselines_of=${runs.r1}`)).toEqual(['r4', 'r2', 'r1'])
      expect(await names(`baselines_of=${runs.r3}`)).toEqual(['r3'])
      expect(await names(`baselines_of=${runs.r1}&baseline_policy_version=v1&limit=1`)).toEqual(['r2'])
      expect(await names(`baselines_of=${rivalRun}`)).toEqual([]) // another client's run is unknown here
      expect((await call(`${svc.url}/api/eval-runs?baselines_of=nope`, { key })).body.error).toBe('baselines_of: must be an eval run id')
    })
  })
}
