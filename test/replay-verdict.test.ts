/**
 * The verdict end to end (issue 17): the replay harness against the
 * in-process service, one run that ends inconclusive and one that ships,
 * with the metric blob's action evidence and provenance labels, the
 * thresholds set through `createRun`, and a dry run rolled up by the same code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import type { Observation } from '../src/replay/episode.ts'
import { completeRun, createRun } from '../src/replay/eval-run.ts'
import { runAgainst } from '../src/replay/run.ts'
import { DOF, recordBaseline, STEPS } from './helpers/baselines.ts'
import { startService, type TestService } from './helpers/service.ts'

let svc: TestService
let client: EpisodicClient
let baselines: string[]

beforeAll(async () => {
  svc = await startService('pglite')
  client = new EpisodicClient({ apiKey: (await svc.newTenant('verdict')).key, baseUrl: svc.url })
  baselines = []
  for (let i = 0; i < 4; i++) baselines.push(await recordBaseline(client))
}, 120_000)
afterAll(() => svc?.close())

/** Replays the recorded joint positions and, on the last step, reports `outcome(episode)`. */
function reporting(outcome: (episode: number) => Record<string, unknown> | undefined) {
  let step = 0
  return (obs: Observation) => {
    const action: Record<string, unknown> = { '/joint_states/position': obs['/joint_states/position']!.data }
    const episode = Math.floor(step / STEPS)
    if (++step % STEPS === 0) {
      const reported = outcome(episode)
      if (reported) action._outcome = reported
    }
    return action
  }
}

describe('the verdict end to end', () => {
  it('ships: enough episodes, a significant improvement, the policy self-reporting labelled', async () => {
    const run = await createRun({ candidatePolicyVersion: 'ship-v3', baselineEpisodeIds: baselines, client, minEpisodes: 4, maxOodActionShare: 0.1 })
    expect([run.minEpisodes, run.maxOodActionShare]).toEqual([4, 0.1])
    const results = await runAgainst(run, reporting(() => ({ reward_total: 15, collision_count: 0, time_to_goal_s: 4 })))
    expect(results[0]!.metrics).toMatchObject({
      action_l2_mean: 0,
      action_l2_normalized_mean: 0,
      action_l2_by_key: { '/joint_states/position': 0 },
      nonfinite_steps: 0,
      outcome_source: { success: 'recorded', reward_total: 'reported', collision_count: 'reported', time_to_goal_s: 'reported' },
    })
    const { summary } = await completeRun(run)
    expect(summary).toMatchObject({ verdict: 'ship', recommend: 'ship', min_episodes: 4, episodes_needed: null })
    expect(summary.reward_mean).toMatchObject({
      baseline: 10,
      candidate: 15,
      delta: 5,
      n: 4,
      ci_low: 5,
      ci_high: 5,
      significant: true,
      candidate_source: { reported: 4, recorded: 0 },
    })
    expect(summary.success_rate.candidate_source).toEqual({ reported: 0, recorded: 4 })
    expect(summary.action_divergence).toEqual({ n: 4, l2_mean: 0, l2_normalized_mean: 0, ood_action_share_mean: 0, max_ood_action_share: 0.1 })
    expect(summary.reasons[0]).toMatch(
      /^Significantly better: mean reward 10 -> 15 \(\+5, 95% interval \+5 to \+5, n=4\); collision rate 100% -> 0% \(-100 pp, 95% interval -\d+(\.\d+)? pp to -\d+(\.\d+)? pp, n=4\); time to goal \(s\) 5 -> 4 \(-1, 95% interval -1 to -1, n=4\)\.$/,
    )
    expect(summary.reasons[1]).toBe(
      '3 of 4 comparable metrics improved on the point estimates (ship needs two thirds), and neither success rate nor collision rate got worse.',
    )
    const stored = await client.getEvalRun(run.id!)
    expect(stored).toMatchObject({ min_episodes: 4, max_ood_action_share: 0.1, summary: { verdict: 'ship' } })
  })

  it('is inconclusive when the reported effect is noise, and says how many episodes would settle it', async () => {
    const rewards = [14, 7, 12, 9]
    const run = await createRun({ candidatePolicyVersion: 'noisy-v3', baselineEpisodeIds: baselines, client, minEpisodes: 4 })
    await runAgainst(run, reporting((episode) => ({ reward_total: rewards[episode] })))
    const { summary } = await completeRun(run)
    expect(summary.reward_mean).toMatchObject({ delta: 0.5, n: 4, significant: false })
    expect(summary.verdict).toBe('inconclusive')
    expect(summary.episodes_needed).toBeGreaterThan(4)
    expect(summary.reasons[0]).toMatch(/^No metric is significantly better: /)
    expect(summary.reasons.at(-2)).toMatch(new RegExp(`^About ${summary.episodes_needed} paired episodes would resolve mean reward`))
    // The policy reported only rewards: the other outcomes are the recording's, and the reasons say so.
    expect(summary.reasons.at(-1)).toBe(
      "Success rate, collision rate and time to goal (s) are the recording's (the policy reported none through _outcome); a copied value cannot differ from the recording.",
    )
  })

  it("leaves a policy's NaN components out of the action metrics and counts the steps", async () => {
    const run = await createRun({ candidatePolicyVersion: 'nan-v3', baselineEpisodeIds: [baselines[0]!], client })
    let step = 0
    const [result] = await runAgainst(run, (obs) => {
      const position = Array.from(obs['/joint_states/position']!.data as Float64Array)
      if (step++ % 5 === 0) position[0] = Number.NaN // a NaN sensor value passed straight through
      return { '/joint_states/position': position }
    })
    expect(result!.status).toBe('done')
    expect(result!.metrics).toMatchObject({ nonfinite_steps: STEPS / 5, action_l2_mean: 0, ood_action_share_candidate: 0 })
    expect(DOF).toBeGreaterThan(1)
  })

  it('fails an episode whose actions are non-finite at every step, so a broken policy cannot ship on what it reports', async () => {
    const run = await createRun({ candidatePolicyVersion: 'nan-all', baselineEpisodeIds: baselines, client, dryRun: true, minEpisodes: 4 })
    // Before, every episode was done with null action metrics and the flattering outcomes made it a ship.
    const results = await runAgainst(run, (obs) => ({
      '/joint_states/position': Array.from(obs['/joint_states/position']!.data as Float64Array, () => Number.NaN),
      _outcome: { success: true, reward_total: 100, collision_count: 0, time_to_goal_s: 1 },
    }), { stderr: () => {} })
    expect(results.map((r) => r.status)).toEqual(baselines.map(() => 'failed'))
    expect(results[0]!.error).toMatch(
      new RegExp(`^RangeError: policy returned non-finite actions \\(NaN or Infinity\\) at every step \\(${STEPS} of ${STEPS}\\)`),
    )
    expect((await completeRun(run)).summary.verdict).toBe('hold')
  })

  it('dry run: the same rollup code, locally, the same every time', async () => {
    const run = await createRun({ candidatePolicyVersion: 'ship-v3', baselineEpisodeIds: baselines, client, dryRun: true, minEpisodes: 4 })
    await runAgainst(run, reporting(() => ({ reward_total: 15, collision_count: 0, time_to_goal_s: 4 })))
    const first = await completeRun(run)
    expect(first.summary).toMatchObject({ verdict: 'ship', min_episodes: 4 })
    expect(JSON.stringify((await completeRun(run)).summary)).toBe(JSON.stringify(first.summary))
  })
})
