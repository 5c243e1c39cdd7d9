/**
 * The replay harness end to end against the in-process service: baselines
 * uploaded through signed URLs, a candidate policy run, per-episode failures,
 * dry runs, the `_outcome` sentinel, and the library's error classes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { AuthError, ConfigurationError, ConflictError, NotFoundError, TransportError } from '../src/client/errors.ts'
import type { Observation } from '../src/replay/episode.ts'
import { readNpz, writeNpz } from '../src/replay/npz/index.ts'
import { completeRun, createRun, resumeRun } from '../src/replay/eval-run.ts'
import { runAgainst } from '../src/replay/run.ts'
import { baselineAction, DOF, recordBaseline, STEPS } from './helpers/baselines.ts'
import { startService, type TestService } from './helpers/service.ts'

let svc: TestService
let client: EpisodicClient
let baselines: string[]
let key: string

beforeAll(async () => {
  svc = await startService('pglite')
  ;({ key } = await svc.newTenant('robots'))
  client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
  baselines = [
    await recordBaseline(client),
    await recordBaseline(client),
    await recordBaseline(client, { success: false, reward_total: 4, collision_count: 0 }),
  ]
})
afterAll(() => svc?.close())

/** A policy off the baseline by `offset` on every joint. */
const offsetPolicy = (offset: number) => (obs: Observation) => {
  const position = obs['/joint_states/position']!.data as Float64Array
  return { '/joint_states/position': Array.from(position, (x) => x + offset) }
}

describe('replay harness', () => {
  it('runs a policy over every baseline, uploads results and replay episodes, and rolls up', async () => {
    const run = await createRun({
      candidatePolicyVersion: 'cand-v2',
      baselineEpisodeIds: baselines,
      baselinePolicyVersion: 'base-v1',
      metadata: { git: 'abc' },
      client,
    })
    expect(run.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(run.portalUrl).toBe(`${svc.url}/portal/eval-runs/${run.id}`)
    const seen: number[] = []
    const results = await runAgainst(run, offsetPolicy(0.1), { onEpisode: (r) => void seen.push(r.index) })
    expect(seen).toEqual([1, 2, 3])
    expect(results.map((r) => r.status)).toEqual(['done', 'done', 'done'])
    const l2 = Math.sqrt(DOF * 0.01)
    for (const r of results) {
      expect(r.metrics!.action_l2_mean).toBeCloseTo(l2, 12)
      expect(r.metrics!.steps).toBe(STEPS)
    }
    // Without _outcome the candidate's outcome equals the baseline's.
    expect(results[0]!.metrics).toMatchObject({
      success_baseline: true,
      success_candidate: true,
      reward_total_candidate: 10,
      collision_count_candidate: 1,
      time_to_goal_s_candidate: 5,
    })
    expect(results[2]!.metrics).toMatchObject({ success_candidate: false, time_to_goal_s_baseline: null, time_to_goal_s_candidate: null })

    const stored = await client.getEvalRun(run.id!)
    expect(stored.results.map((r) => r.status)).toEqual(['done', 'done', 'done'])
    const replay = await client.getEpisode(results[0]!.replayEpisodeId!)
    expect(replay).toMatchObject({ source: 'replay', status: 'ready', policy_version: 'cand-v2', robot: 'arm-1' })
    expect(replay.metadata).toMatchObject({ eval_run_id: run.id, baseline_episode_id: baselines[0], success: true, reward_total: 10 })

    const finalized = await completeRun(run)
    expect(finalized.status).toBe('completed')
    expect(finalized.summary.success_rate).toMatchObject({ baseline: 2 / 3, candidate: 2 / 3, delta: 0, delta_is_better: false, n: 3 })
    expect(finalized.summary.recommend).toBe('hold')
  })

  it('warns once when the policy returns none of the baseline action keys, as a policy server without --action-map does', async () => {
    const run = await createRun({ candidatePolicyVersion: 'renamed', baselineEpisodeIds: baselines, client, dryRun: true })
    const errors: string[] = []
    const results = await runAgainst(run, (obs) => ({ actions: obs['/joint_states/position']!.data }), { stderr: (text) => errors.push(text) })
    expect(results.map((r) => [r.status, r.metrics!.action_l2_mean])).toEqual(baselines.map(() => ['done', null]))
    expect(errors).toEqual([
      expect.stringMatching(/^warning: the policy returned none of the baseline's action keys \(baseline \S+: \/joint_states\/position; the policy: actions\)/),
    ])
    const quiet: string[] = []
    await runAgainst(await createRun({ candidatePolicyVersion: 'same', baselineEpisodeIds: baselines, client, dryRun: true }), offsetPolicy(0), {
      stderr: (text) => quiet.push(text),
    })
    expect(quiet).toEqual([])
  })

  it('turns a throwing policy into a failed row with the stack on stderr, and goes on', async () => {
    const run = await createRun({ candidatePolicyVersion: 'flaky', baselineEpisodeIds: baselines, client })
    let calls = 0
    const errors: string[] = []
    const results = await runAgainst(
      run,
      (obs) => {
        calls++
        if (calls === STEPS + 3) throw new Error('actuator model diverged')
        return offsetPolicy(0)(obs)
      },
      { stderr: (text) => errors.push(text) },
    )
    expect(results.map((r) => r.status)).toEqual(['done', 'failed', 'done'])
    // The step is named, as for Python policies; the stack keeps the policy's frames.
    expect(results[1]!.error).toMatch(/^Error: actuator model diverged \(step 2\)\n\s+at /)
    expect(errors[0]).toContain(`episode ${baselines[1]} failed`)
    expect(errors[0]).toMatch(/at .*replay\.test\.ts/)
    const stored = await client.getEvalRun(run.id!)
    expect(stored.results[1]).toMatchObject({ status: 'failed', error: expect.stringContaining('actuator model diverged') })
    expect((await completeRun(run)).summary.recommend).toBe('hold')
  })

  it('fills the candidate outcome from _outcome on the last step; missing keys fall back', async () => {
    const run = await createRun({ candidatePolicyVersion: 'outcome', baselineEpisodeIds: [baselines[0]!], client })
    let step = 0
    // deno-lint-ignore require-await -- an async policy, on purpose
    const [result] = await runAgainst(run, async (obs) => {
      const action: Record<string, unknown> = offsetPolicy(0)(obs)
      if (++step === STEPS) action._outcome = { reward_total: 15, collision_count: 0, time_to_goal_s: 4 }
      return action
    })
    expect(result!.metrics).toMatchObject({
      success_baseline: true,
      success_candidate: true,
      reward_total_candidate: 15,
      collision_count_candidate: 0,
      time_to_goal_s_candidate: 4,
      action_l2_mean: 0,
      ood_action_share_candidate: 0,
    })
    const { summary } = await completeRun(run)
    expect(summary.reward_mean.delta_is_better).toBe(true)
    expect(summary.collision_rate.delta).toBe(-1)
    expect(summary.success_rate.delta).toBe(0) // fell back to the baseline
    expect([summary.better_count, summary.metric_total]).toEqual([3, 4])
    // One episode is not evidence: the majority improved, yet the verdict waits for min_episodes.
    expect(summary).toMatchObject({ verdict: 'inconclusive', recommend: 'hold' })
  })

  it('fails an episode whose action shape differs, naming the key and both shapes', async () => {
    const run = await createRun({ candidatePolicyVersion: 'wrong-shape', baselineEpisodeIds: [baselines[0]!], client })
    const [result] = await runAgainst(run, () => ({ '/joint_states/position': [1, 2, 3] }), { stderr: () => {} })
    expect(result!.status).toBe('failed')
    expect(result!.error).toContain('/joint_states/position')
    expect(result!.error).toMatch(/\[7\]/)
    expect(result!.error).toMatch(/\[3\]/)
    // episodic's own check, not the policy's code: the row holds the message, not episodic's stack frames.
    expect(result!.error).toMatch(/^MetricsError: action key "\/joint_states\/position": [^\n]+$/)
  })

  it('dry run: fetches and computes, creates nothing on the server', async () => {
    const before = (await client.listEvalRuns({ limit: 200 })).items.length
    const episodesBefore = (await client.listEpisodes({ source: 'replay', limit: 200 })).items.length
    const run = await createRun({ candidatePolicyVersion: 'dry', baselineEpisodeIds: baselines, client, dryRun: true })
    expect(run.id).toBeNull()
    const results = await runAgainst(run, offsetPolicy(0.5))
    expect(results.every((r) => r.status === 'done' && r.replayEpisodeId === null)).toBe(true)
    expect(results[0]!.metrics!.ood_action_share_candidate).toBeGreaterThan(0)
    const local = await completeRun(run)
    expect(local).toMatchObject({ eval_run_id: null, status: 'dry_run' })
    expect(local.summary.metric_total).toBeGreaterThan(0)
    // Replaying the dry run again replaces its results: the rollup counts each baseline once.
    await runAgainst(run, offsetPolicy(0))
    expect(run.results.map((r) => r.index)).toEqual([1, 2, 3])
    expect(run.results.every((r) => r.metrics!.action_l2_mean === 0)).toBe(true)
    expect((await completeRun(run)).summary.success_rate.n).toBe(3)
    expect((await client.listEvalRuns({ limit: 200 })).items.length).toBe(before)
    expect((await client.listEpisodes({ source: 'replay', limit: 200 })).items.length).toBe(episodesBefore)
    // runAgainst's own dryRun flag also skips uploads on a real run.
    const real = await createRun({ candidatePolicyVersion: 'dry2', baselineEpisodeIds: [baselines[0]!], client })
    await runAgainst(real, offsetPolicy(0), { dryRun: true })
    expect((await client.getEvalRun(real.id!)).results[0]!.status).toBe('pending')
    expect(real.results).toEqual([])
    expect((await runAgainst(real, offsetPolicy(0))).map((r) => r.status)).toEqual(['done'])
  })

  it("uploadActions keeps a policy's whole-episode path (actEpisode) and uploads what it returned", async () => {
    const run = await createRun({ candidatePolicyVersion: 'whole-episodes', baselineEpisodeIds: [baselines[0]!], client })
    const policy = {
      act: () => {
        throw new Error('called step by step')
      },
      actEpisode: (obs: Observation, { steps }: { steps: number }) => {
        const position = obs['/joint_states/position']!.data as Float64Array
        return Array.from({ length: steps }, (_, s) => ({ '/joint_states/position': Array.from(position.subarray(s * DOF, (s + 1) * DOF), (x) => x * 2) }))
      },
    }
    const [result] = await runAgainst(run, policy, { uploadActions: true, stderr: () => {} })
    expect(result).toMatchObject({ status: 'done', error: null })
    const uploaded = readNpz(await client.downloadArtifact(result!.replayEpisodeId!, 'actions'))['/joint_states/position']!
    expect(uploaded.shape).toEqual([STEPS, DOF])
    expect(uploaded.data[5 * DOF + 3]).toBe(baselineAction(5, 3) * 2)
  })

  it('refuses a run already completed before replaying anything: no orphan replay episode', async () => {
    const run = await createRun({ candidatePolicyVersion: 'late', baselineEpisodeIds: [baselines[0]!], client })
    await completeRun(run)
    const episodesBefore = (await client.listEpisodes({ source: 'replay', limit: 200 })).items.length
    let calls = 0
    const late = runAgainst(run, (obs) => (calls++, offsetPolicy(0)(obs)))
    await expect(late).rejects.toBeInstanceOf(ConflictError)
    await expect(late).rejects.toThrow(`eval run ${run.id} is already completed`)
    expect(calls).toBe(0)
    expect((await client.listEpisodes({ source: 'replay', limit: 200 })).items.length).toBe(episodesBefore)
  })

  it('resumeRun goes on with a run a network failure stopped: only the baselines without a result replay', async () => {
    const run = await createRun({ candidatePolicyVersion: 'resumed', baselineEpisodeIds: baselines, client, minEpisodes: 2, maxOodActionShare: 0.5 })
    // The service goes away after the first result is stored: the run stops (TransportError) and stays pending.
    let results = 0
    const flaky = new EpisodicClient({
      apiKey: key,
      baseUrl: svc.url,
      fetch: (input, init) => {
        const url = String(input instanceof Request ? input.url : input)
        if (url.endsWith('/result') && ++results > 1) return Promise.reject(new TypeError('fetch failed'))
        return fetch(input, init)
      },
    })
    await expect(runAgainst({ ...run, client: flaky }, offsetPolicy(0.1))).rejects.toBeInstanceOf(TransportError)
    expect((await client.getEvalRun(run.id!)).results.map((r) => r.status)).toEqual(['done', 'pending', 'pending'])

    const again = await resumeRun({ evalRunId: run.id!, client })
    expect(again).toMatchObject({
      id: run.id,
      name: 'resumed',
      candidatePolicyVersion: 'resumed',
      baselineEpisodeIds: baselines,
      minEpisodes: 2,
      maxOodActionShare: 0.5,
    })
    expect(again.results).toEqual([expect.objectContaining({ index: 1, total: 3, baselineEpisodeId: baselines[0], status: 'done' })])
    const replayed: string[] = []
    const fresh = await runAgainst(again, (obs, step) => (step.step === 0 && replayed.push(step.baselineEpisodeId), offsetPolicy(0.1)(obs)), { concurrency: 2 })
    expect(replayed.sort()).toEqual([baselines[1], baselines[2]].sort())
    expect(fresh.map((r) => [r.index, r.baselineEpisodeId])).toEqual([[2, baselines[1]], [3, baselines[2]]])
    expect(again.results.map((r) => r.index)).toEqual([1, 2, 3])
    // A second call finds nothing left to replay.
    expect(await runAgainst(again, () => ({}))).toEqual([])
    const { summary } = await completeRun(again)
    expect(summary.success_rate.n).toBe(3)

    await expect(resumeRun({ evalRunId: run.id!, client })).rejects.toThrow(`eval run ${run.id} is already completed`)
    await expect(resumeRun({ evalRunId: '0190a6d2-0000-7000-8000-000000000000', client })).rejects.toBeInstanceOf(NotFoundError)
    await expect(resumeRun({ evalRunId: '', client })).rejects.toBeInstanceOf(ConfigurationError)
  })

  it('raises the spec errors: ConfigurationError, NotFoundError, AuthError, TransportError', async () => {
    await expect(createRun({ candidatePolicyVersion: '', baselineEpisodeIds: baselines, client })).rejects.toBeInstanceOf(ConfigurationError)
    await expect(createRun({ candidatePolicyVersion: 'v', baselineEpisodeIds: [], client })).rejects.toBeInstanceOf(ConfigurationError)
    const other = new EpisodicClient({ apiKey: (await svc.newTenant()).key, baseUrl: svc.url })
    const foreign = await createRun({ candidatePolicyVersion: 'v', baselineEpisodeIds: baselines, client: other }).catch((e) => e)
    expect(foreign).toBeInstanceOf(NotFoundError)
    expect(foreign.name).toBe('NotFoundError')
    const bad = new EpisodicClient({ apiKey: `epk_aaaaaaaaaaaa_${'B'.repeat(43)}`, baseUrl: svc.url })
    const auth = await createRun({ candidatePolicyVersion: 'v', baselineEpisodeIds: baselines, client: bad }).catch((e) => e)
    expect(auth).toBeInstanceOf(AuthError)
    expect(auth.code).toBe('auth')
    const down = new EpisodicClient({ apiKey: `epk_aaaaaaaaaaaa_${'B'.repeat(43)}`, baseUrl: 'http://127.0.0.1:9' })
    const transport = await createRun({ candidatePolicyVersion: 'v', baselineEpisodeIds: baselines, client: down }).catch((e) => e)
    expect(transport).toBeInstanceOf(TransportError)
    expect(transport.message).toContain('network failure')
  })

  it('checks CRC-32s by default: a corrupt baseline archive fails its episode, naming the member', async () => {
    const position = new Float64Array(STEPS * DOF).map((_, i) => baselineAction(Math.floor(i / DOF), i % DOF))
    const depth = new Float32Array(STEPS * 16)
    const archives = {
      actions: writeNpz({ '/joint_states/position': { data: position, shape: [STEPS, DOF] } }), // stored: bytes as written
      sensors: writeNpz({ '/joint_states/position': { data: position, shape: [STEPS, DOF] }, '/camera/depth': { data: depth, shape: [STEPS, 4, 4] } }),
    }
    archives.actions[archives.actions.length - 200]! ^= 0x01 // one bit of one element: a damaged file, still a valid zip
    const opened = await client.openEpisode({ metadata: { success: true }, request_uploads: ['actions', 'sensors'] })
    for (const entry of opened.upload_urls) await client.upload(entry, archives[entry.kind as 'actions' | 'sensors'])
    await client.finalizeEpisode(opened.episode_id, { status: 'ready' })
    const run = await createRun({ candidatePolicyVersion: 'crc', baselineEpisodeIds: [opened.episode_id, baselines[0]!], client, dryRun: true })
    const checked = await runAgainst(run, offsetPolicy(0), { stderr: () => {} })
    expect(checked.map((r) => r.status)).toEqual(['failed', 'done'])
    expect(checked[0]!.error).toBe('NpzError: actions.npz: npz entry "/joint_states/position.npy": CRC-32 mismatch (corrupt archive)')
    // Unchecked, the damaged value goes to the policy and the metrics unnoticed.
    const unchecked = await runAgainst(run, offsetPolicy(0), { stderr: () => {}, verifyCrc: false })
    expect(unchecked.map((r) => r.status)).toEqual(['done', 'done'])
  })

  it('fails an episode whose archives would inflate past maxInflatedBytes, naming the sizes', async () => {
    const run = await createRun({ candidatePolicyVersion: 'v', baselineEpisodeIds: [baselines[0]!], client, dryRun: true })
    const results = await runAgainst(run, offsetPolicy(0), { stderr: () => {}, maxInflatedBytes: 1000 })
    expect(results[0]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(
        /^NpzError: (actions|sensors)\.npz: npz: its compressed members declare \d+ bytes of arrays, over the limit of 1000 \(maxInflatedBytes\)$/,
      ),
    })
    expect((await runAgainst(run, offsetPolicy(0), { stderr: () => {}, maxInflatedBytes: 1e6 }))[0]!.status).toBe('done')
  })

  it('fails an episode whose baseline has no actions artifact, and goes on', async () => {
    const bare = (await client.openEpisode({ request_uploads: [] })).episode_id
    const run = await createRun({ candidatePolicyVersion: 'v', baselineEpisodeIds: [bare, baselines[0]!], client })
    const results = await runAgainst(run, offsetPolicy(0), { stderr: () => {} })
    expect(results.map((r) => r.status)).toEqual(['failed', 'done'])
    // One line naming the artifact, not the library's stack (a policy's own error keeps its stack).
    expect(results[0]!.error).toMatch(/^NotFoundError: GET \/api\/episodes\/[0-9a-f-]{36}\/artifact\/actions: [^\n]*not found[^\n]*$/)
    // Never finalized: the row says so, and what to do.
    expect(results[0]!.error).toMatch(/ \(the baseline is recording: record its actions\.npz and finalize it, or leave it out\)$/)
    // A ready baseline without the file says only what is missing.
    const finalized = (await client.openEpisode({ request_uploads: [] })).episode_id
    await client.finalizeEpisode(finalized, {})
    const again = await runAgainst(await createRun({ candidatePolicyVersion: 'v', baselineEpisodeIds: [finalized], client }), offsetPolicy(0), {
      stderr: () => {},
    })
    expect(again[0]!.error).toMatch(/not found[^\n(]*$/)
  })
})
