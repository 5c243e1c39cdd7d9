/**
 * Conformance of the eval-run endpoints, the reads and the artifact route
 * (contract: "Read endpoints", "Eval-run endpoints", "Metric blob", "Rollup"),
 * against any target (test/conformance/target.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Target } from './target.ts'

/** The eval-run and read tests against the target `svc()` returns. */
export function evalConformance(svc: () => Target): void {
  let key: string
  let otherKey: string

  beforeAll(async () => {
    key = (await svc().newTenant('lab')).key
    otherKey = (await svc().newTenant('rival')).key
  })

  const post = (path: string, body: unknown, k = key) => svc().call(`${svc().url}${path}`, { key: k, body })
  const get = (path: string, k = key) => svc().call(`${svc().url}${path}`, { key: k })
  async function baselines(n: number, k = key, metadata: Record<string, unknown> = {}): Promise<string[]> {
    const ids: string[] = []
    for (let i = 0; i < n; i++) {
      const opened = await post('/api/ingest/episode', { policy_version: 'base-v1', request_uploads: ['actions', 'sensors'], metadata }, k)
      ids.push(opened.body.episode_id)
    }
    return ids
  }
  const createRun = (ids: string[], extra: Record<string, unknown> = {}, k = key) =>
    post('/api/ingest/eval-run', { candidate_policy_version: 'cand-v2', baseline_episode_ids: ids, ...extra }, k)

  describe('create', () => {
    it('creates a pending run with one pending row per baseline; name falls back to the candidate version', async () => {
      const ids = await baselines(3)
      const reply = await createRun(ids, { baseline_policy_version: 'base-v1', metadata: { git: 'abc123' } })
      expect(reply.status).toBe(201)
      expect(reply.body).toMatchObject({
        name: 'cand-v2',
        status: 'pending',
        candidate_policy_version: 'cand-v2',
        baseline_policy_version: 'base-v1',
        baseline_episode_ids: ids,
        metadata: { git: 'abc123' },
        runner_kind: 'local',
        min_episodes: 10,
        max_ood_action_share: 0.25,
        results: ids.map((id) => ({ baseline_episode_id: id, status: 'pending' })),
      })
      expect(reply.body.eval_run_id).toMatch(/^[0-9a-f-]{36}$/)
      expect(reply.body.created_at).toMatch(/\.\d{3}Z$/)
      const named = await createRun(ids, { name: 'nightly', min_episodes: 3, max_ood_action_share: 0.5 })
      expect(named.body).toMatchObject({ name: 'nightly', min_episodes: 3, max_ood_action_share: 0.5 })
      expect((await get(`/api/eval-runs/${named.body.eval_run_id}`)).body).toMatchObject({ min_episodes: 3, max_ood_action_share: 0.5 })
      const read = await get(`/api/eval-runs/${reply.body.eval_run_id}`)
      expect(read.body).toMatchObject({ status: 'pending', summary: null, baseline_episode_ids: ids })
      expect(read.body.results.map((r: any) => r.status)).toEqual(['pending', 'pending', 'pending'])
    })

    it('refuses the whole request with 404 when any baseline is foreign, unknown or malformed, writing nothing', async () => {
      const mine = await baselines(2)
      const foreign = await baselines(1, otherKey)
      const before = (await get('/api/eval-runs?limit=200')).body.items.length
      for (const bad of [foreign[0], '7d9e0a63-0000-4000-8000-000000000000', 'nope']) {
        const reply = await createRun([...mine, bad])
        expect(reply.status).toBe(404)
        expect(reply.body.error).toContain('not found')
      }
      expect((await get('/api/eval-runs?limit=200')).body.items.length).toBe(before)
    })

    it.each([
      [{ baseline_episode_ids: ['x'] }, 'candidate_policy_version'],
      [{ candidate_policy_version: '', baseline_episode_ids: ['x'] }, 'candidate_policy_version'],
      [{ candidate_policy_version: 'x'.repeat(121), baseline_episode_ids: ['x'] }, 'candidate_policy_version'],
      [{ candidate_policy_version: 'c' }, 'baseline_episode_ids'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: [] }, 'baseline_episode_ids'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: [1] }, 'baseline_episode_ids'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) }, 'baseline_episode_ids'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a', 'a'] }, 'baseline_episode_ids'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], name: 'x'.repeat(201) }, 'name'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], metadata: { weights: 'x'.repeat(65 * 1024) } }, 'metadata'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], runner_kind: 'hosted' }, 'runner_kind'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], min_episodes: 0 }, 'min_episodes'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], min_episodes: 2.5 }, 'min_episodes'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], min_episodes: 10001 }, 'min_episodes'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], max_ood_action_share: 1.5 }, 'max_ood_action_share'],
      [{ candidate_policy_version: 'c', baseline_episode_ids: ['a'], max_ood_action_share: '0.2' }, 'max_ood_action_share'],
    ])('rejects %#: 400 naming %s', async (body, field) => {
      const reply = await post('/api/ingest/eval-run', body)
      expect(reply.status).toBe(400)
      expect(reply.body.error).toContain(field)
    })

    it('needs an API key', async () => {
      const reply = await svc().call(`${svc().url}/api/ingest/eval-run`, { body: { candidate_policy_version: 'c', baseline_episode_ids: ['a'] } })
      expect(reply.status).toBe(401)
      expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="service"')
    })
  })

  describe('results and finalize', () => {
    const blob = (over: Record<string, unknown> = {}) => ({
      steps: 100,
      success_baseline: true,
      success_candidate: true,
      reward_total_baseline: 10,
      reward_total_candidate: 12,
      collision_count_baseline: 1,
      collision_count_candidate: 0,
      time_to_goal_s_baseline: 20,
      time_to_goal_s_candidate: 18,
      action_l2_mean: 0.25,
      ood_action_share_baseline: null,
      ood_action_share_candidate: 0.1,
      ...over,
    })

    it('stores results, replaces on retry, truncates errors, skips leftovers and rolls up', async () => {
      const ids = await baselines(4)
      const run = (await createRun(ids)).body.eval_run_id
      const replay = (await post('/api/ingest/episode', { source: 'replay', request_uploads: [] })).body.episode_id
      const first = await post(`/api/ingest/eval-run/${run}/result`, {
        baseline_episode_id: ids[0],
        status: 'done',
        replay_episode_id: replay,
        metrics: blob({ reward_total_candidate: 1 }),
      })
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ eval_run_id: run, baseline_episode_id: ids[0], status: 'done' })
      // A retry replaces the row.
      expect(
        (await post(`/api/ingest/eval-run/${run}/result`, {
          baseline_episode_id: ids[0],
          status: 'done',
          replay_episode_id: replay,
          metrics: blob({ extra_column: { kept: [1, 2] } }),
        })).status,
      ).toBe(200)
      await post(`/api/ingest/eval-run/${run}/result`, { baseline_episode_id: ids[1], status: 'done', metrics: blob() })
      const failed = await post(`/api/ingest/eval-run/${run}/result`, { baseline_episode_id: ids[2], status: 'failed', error: 'E'.repeat(5000) })
      expect(failed.status).toBe(200)

      const detail = (await get(`/api/eval-runs/${run}`)).body
      expect(detail.results[0]).toMatchObject({
        status: 'done',
        replay_episode_id: replay,
        metrics: { reward_total_candidate: 12, extra_column: { kept: [1, 2] } },
      })
      expect(detail.results[2].error).toHaveLength(2000)

      const fin = await post(`/api/ingest/eval-run/${run}/finalize`, {})
      expect(fin.status).toBe(200)
      expect(fin.body).toMatchObject({ eval_run_id: run, status: 'completed' })
      const s = fin.body.summary
      expect(s.success_rate).toMatchObject({ baseline: 1, candidate: 1, delta: 0, delta_is_better: false, n: 2, method: 'newcombe_paired' })
      expect(s.reward_mean).toMatchObject({
        baseline: 10,
        candidate: 12,
        delta: 2,
        delta_is_better: true,
        n: 2,
        ci_low: 2,
        ci_high: 2,
        significant: true,
        method: 'bootstrap_paired',
        p_value: null,
      })
      expect(s.collision_rate).toMatchObject({ baseline: 1, candidate: 0, delta: -1, delta_is_better: true, n: 2, p_value: 0.25 })
      expect(s.time_to_goal_s).toMatchObject({ baseline: 20, candidate: 18, delta: -2, delta_is_better: true })
      expect(s.ood_action_share).toMatchObject({ baseline: null, candidate: 0.1, delta: null, delta_is_better: null, n: 0, ci_low: null, significant: null })
      expect(s.verdict).toBe('hold')
      expect(s.reasons[0]).toBe('1 episode failed (the policy raised or the replay broke); a failed episode blocks ship.')
      expect(s.action_divergence).toEqual({ n: 2, l2_mean: 0.25, l2_normalized_mean: null, ood_action_share_mean: 0.1, max_ood_action_share: 0.25 })
      expect(s.metric_total).toBe(4)
      expect(s.better_count).toBe(3)
      expect(s.recommend).toBe('hold') // a failed row blocks ship
      expect(s.episodes).toEqual({ total: 4, done: 2, failed: 1, skipped: 1, pending: 0 })

      const again = await post(`/api/ingest/eval-run/${run}/finalize`, {})
      expect(again.text).toBe(fin.text) // byte for byte, key order included
      const after = (await get(`/api/eval-runs/${run}`)).body
      expect(after.status).toBe('completed')
      expect(after.summary).toEqual(fin.body.summary)
      expect(after.results.map((r: any) => r.status)).toEqual(['done', 'done', 'failed', 'skipped'])

      const late = await post(`/api/ingest/eval-run/${run}/result`, { baseline_episode_id: ids[3], status: 'done', metrics: blob() })
      expect(late.status).toBe(409)
    })

    it('recommends ship when a clear majority improved significantly over min_episodes and nothing blocks', async () => {
      const ids = await baselines(3)
      const run = (await createRun(ids, { min_episodes: 3 })).body.eval_run_id
      for (const id of ids) await post(`/api/ingest/eval-run/${run}/result`, { baseline_episode_id: id, status: 'done', metrics: blob() })
      const fin = await post(`/api/ingest/eval-run/${run}/finalize`, {})
      expect(fin.body.summary).toMatchObject({ verdict: 'ship', recommend: 'ship', min_episodes: 3, episodes_needed: null })
    })

    it('is inconclusive under min_episodes (default 10), and says how many episodes are needed', async () => {
      const ids = await baselines(2)
      const run = (await createRun(ids)).body.eval_run_id
      for (const id of ids) await post(`/api/ingest/eval-run/${run}/result`, { baseline_episode_id: id, status: 'done', metrics: blob() })
      const fin = await post(`/api/ingest/eval-run/${run}/finalize`, {})
      expect(fin.body.summary).toMatchObject({ verdict: 'inconclusive', recommend: 'hold', min_episodes: 10, episodes_needed: 10 })
      expect(fin.body.summary.reasons).toContain('Only 2 episodes done; ship needs at least 10 (min_episodes).')
    })

    it('answers 404 for unknown, foreign and malformed runs, and for a baseline not in the run', async () => {
      const ids = await baselines(1)
      const run = (await createRun(ids)).body.eval_run_id
      const outsider = (await baselines(1))[0]
      const body = { baseline_episode_id: ids[0], status: 'done', metrics: blob() }
      const replies = [
        await post(`/api/ingest/eval-run/${run}/result`, body, otherKey),
        await post('/api/ingest/eval-run/3f1c0000-0000-4000-8000-000000000000/result', body),
        await post('/api/ingest/eval-run/not-a-run/result', body),
      ]
      for (const r of replies) expect(r.status).toBe(404)
      expect(replies[0]!.text).toBe(replies[1]!.text)
      expect((await post(`/api/ingest/eval-run/${run}/result`, { ...body, baseline_episode_id: outsider })).status).toBe(404)
      expect((await post(`/api/ingest/eval-run/${run}/finalize`, {}, otherKey)).status).toBe(404)
      expect((await get(`/api/eval-runs/${run}`, otherKey)).status).toBe(404)
      expect((await get('/api/eval-runs/zzz')).status).toBe(404)
      const foreignReplay = (await post('/api/ingest/episode', { request_uploads: [] }, otherKey)).body.episode_id
      expect((await post(`/api/ingest/eval-run/${run}/result`, { ...body, replay_episode_id: foreignReplay })).status).toBe(404)
    })

    it.each([
      [{ status: 'done', metrics: { steps: -1 } }, 'metrics.steps'],
      [{ status: 'done', metrics: { collision_count_candidate: 1.5 } }, 'metrics.collision_count_candidate'],
      [{ status: 'done', metrics: { ood_action_share_candidate: 2 } }, 'metrics.ood_action_share_candidate'],
      [{ status: 'done', metrics: { success_candidate: 'yes' } }, 'metrics.success_candidate'],
      [{ status: 'done', metrics: [] }, 'metrics'],
      [{ status: 'pending' }, 'status'],
      [{ status: 'done', unknown: 1 }, 'unknown'],
    ])('rejects a bad result body %#: 400 naming %s', async (body, field) => {
      const ids = await baselines(1)
      const run = (await createRun(ids)).body.eval_run_id
      const reply = await post(`/api/ingest/eval-run/${run}/result`, { baseline_episode_id: ids[0], ...body })
      expect(reply.status).toBe(400)
      expect(reply.body.error).toContain(field)
    })

    it('rejects a non-empty finalize body', async () => {
      const run = (await createRun(await baselines(1))).body.eval_run_id
      expect((await post(`/api/ingest/eval-run/${run}/finalize`, { force: true })).status).toBe(400)
    })

    it('deleting a baseline episode deletes its result rows', async () => {
      const ids = await baselines(2)
      const run = (await createRun(ids)).body.eval_run_id
      await svc().deleteEpisode(ids[0]!)
      const detail = (await get(`/api/eval-runs/${run}`)).body
      expect(detail.results.map((r: any) => r.baseline_episode_id)).toEqual([ids[1]])
    })
  })

  describe('reads', () => {
    it('lists episodes newest first with cursor pages and filters, per client', async () => {
      const tenant = await svc().newTenant()
      const made: string[] = []
      for (let i = 0; i < 5; i++) {
        // "Newest" is by created_at (milliseconds): in-process, two opens can share one.
        await new Promise((r) => setTimeout(r, 3))
        made.push(
          (await post('/api/ingest/episode', { source: i % 2 ? 'sim' : 'real', policy_version: `p${i % 2}`, request_uploads: [] }, tenant.key)).body.episode_id,
        )
      }
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page: any = await get(`/api/episodes?limit=2${cursor ? `&cursor=${cursor}` : ''}`, tenant.key)
        expect(page.status).toBe(200)
        expect(page.body.items.length).toBeLessThanOrEqual(2)
        seen.push(...page.body.items.map((e: any) => e.episode_id))
        cursor = page.body.next_cursor
      } while (cursor)
      expect(seen).toEqual([...made].reverse())
      const sims = (await get('/api/episodes?source=sim', tenant.key)).body.items
      expect(sims.map((e: any) => e.episode_id)).toEqual([made[3], made[1]])
      expect((await get('/api/episodes?policy_version=p0&status=recording', tenant.key)).body.items).toHaveLength(3)
      expect((await get('/api/episodes?limit=0', tenant.key)).status).toBe(400)
      expect((await get('/api/episodes?limit=201', tenant.key)).status).toBe(400)
      expect((await get('/api/episodes?source=dream', tenant.key)).body.error).toContain('source')
      expect((await get('/api/episodes?cursor=garbage', tenant.key)).body.error).toContain('cursor')
      expect((await get('/api/episodes?sort=asc', tenant.key)).body.error).toContain('sort')
    })

    it('lists eval runs newest first', async () => {
      const tenant = await svc().newTenant()
      const [base] = await baselines(1, tenant.key)
      const a = (await createRun([base!], { name: 'a' }, tenant.key)).body.eval_run_id
      await new Promise((r) => setTimeout(r, 3)) // distinct created_at milliseconds
      const b = (await createRun([base!], { name: 'b' }, tenant.key)).body.eval_run_id
      const list = (await get('/api/eval-runs', tenant.key)).body
      expect(list.items.map((r: any) => r.eval_run_id)).toEqual([b, a])
      expect(list.items[0].baseline_episode_ids).toEqual([base])
      expect(list.next_cursor).toBeNull()
      const paged = (await get('/api/eval-runs?limit=1', tenant.key)).body
      expect(paged.items).toHaveLength(1)
      const rest = (await get(`/api/eval-runs?limit=1&cursor=${paged.next_cursor}`, tenant.key)).body
      expect(rest.items[0].eval_run_id).toBe(a)
    })
  })

  describe('artifact route', () => {
    it('gives a fresh signed GET URL, or a 302 with ?redirect=1, that reads the object back', async () => {
      const opened = (await post('/api/ingest/episode', { request_uploads: ['actions', 'video'] })).body
      const put = opened.upload_urls.find((u: any) => u.kind === 'actions')
      await svc().fetch(put.url, { method: 'PUT', body: 'npz bytes', headers: { 'content-type': 'application/octet-stream' } })
      const reply = await get(`/api/episodes/${opened.episode_id}/artifact/actions`)
      expect(reply.status).toBe(200)
      expect(Object.keys(reply.body).sort()).toEqual(['episode_id', 'expires_at', 'kind', 'url'])
      expect(reply.body).toMatchObject({ episode_id: opened.episode_id, kind: 'actions' })
      const lifetime = Date.parse(reply.body.expires_at) - Date.now()
      expect(lifetime).toBeGreaterThan(14 * 60 * 1000)
      expect(lifetime).toBeLessThanOrEqual(15 * 60 * 1000)
      expect(await (await svc().fetch(reply.body.url)).text()).toBe('npz bytes')
      const redirect = await get(`/api/episodes/${opened.episode_id}/artifact/actions?redirect=1`)
      expect(redirect.status).toBe(302)
      expect(await (await svc().fetch(redirect.headers.get('location')!)).text()).toBe('npz bytes')
    })

    it('answers 404 for unknown kinds, never-requested artifacts, foreign and unknown episodes', async () => {
      const opened = (await post('/api/ingest/episode', { request_uploads: ['actions'] })).body
      const paths = [
        `/api/episodes/${opened.episode_id}/artifact/video`,
        `/api/episodes/${opened.episode_id}/artifact/lidar`,
        '/api/episodes/6a6a0000-0000-4000-8000-000000000000/artifact/actions',
        '/api/episodes/bad-id/artifact/actions',
      ]
      for (const path of paths) expect((await get(path)).status).toBe(404)
      expect((await get(`/api/episodes/${opened.episode_id}/artifact/actions`, otherKey)).status).toBe(404)
      expect((await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifact/actions`)).status).toBe(401)
    })
  })
}
