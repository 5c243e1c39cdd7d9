import { describe, expect, it } from 'vitest'
import type { MetricBlob } from './metric-blob.ts'
import { formatDelta, significant } from './numbers.ts'
import { rollup, type RollupRow } from './rollup.ts'
import { pairedMeanSampleSize } from './stats/sample-size.ts'

const done = (metrics: MetricBlob): RollupRow => ({ status: 'done', metrics })
const times = (n: number, make: (i: number) => RollupRow) => Array.from({ length: n }, (_, i) => make(i))
/** Reward +1 in every episode: significant, and the only comparable metric. */
const better = (i = 0) => done({ reward_total_baseline: 10 + i, reward_total_candidate: 11 + i })

describe('verdict rule 1: hold', () => {
  it('holds on a failed row, whatever else improved', () => {
    const s = rollup([...times(12, better), { status: 'failed', metrics: null }], { seed: 'r' })
    expect(s).toMatchObject({ verdict: 'hold', recommend: 'hold', episodes_needed: null })
    expect(s.reasons).toEqual(['1 episode failed (the policy raised or the replay broke); a failed episode blocks ship.'])
  })

  it('holds when success is significantly worse, naming the numbers', () => {
    const s = rollup(times(12, (i) => done({ success_baseline: true, success_candidate: i < 6, reward_total_baseline: 1, reward_total_candidate: 2 })), {
      seed: 'r',
    })
    expect(s.success_rate).toMatchObject({ baseline: 1, candidate: 0.5, delta: -0.5, significant: true, method: 'newcombe_paired' })
    expect(s.verdict).toBe('hold')
    expect(s.reasons[0]).toMatch(/^Success rate is significantly worse: 100% -> 50% \(-50 pp, 95% interval -\d+(\.\d+)? pp to -\d+(\.\d+)? pp, n=12\)\.$/)
  })

  it('holds when collisions are significantly worse', () => {
    const s = rollup(times(12, (i) => done({ collision_count_baseline: 0, collision_count_candidate: i < 6 ? 2 : 0 })), { seed: 'r' })
    expect(s.collision_rate).toMatchObject({ delta: 0.5, delta_is_better: false, significant: true })
    expect(s.verdict).toBe('hold')
    expect(s.reasons[0]).toContain('Collision rate is significantly worse')
  })

  it('holds when the mean OOD action share is above max_ood_action_share, and not at or below it', () => {
    const rows = times(12, (i) => done({ reward_total_baseline: i, reward_total_candidate: i + 1, ood_action_share_candidate: 0.43, action_l2_mean: 0.5 }))
    const s = rollup(rows, { seed: 'r' })
    expect(s.verdict).toBe('hold')
    expect(s.action_divergence).toEqual({ n: 12, l2_mean: 0.5, l2_normalized_mean: null, ood_action_share_mean: 0.43, max_ood_action_share: 0.25 })
    expect(s.reasons[0]).toContain('outside the recorded action range in 43% of steps on average, above the limit of 25%')
    expect(rollup(rows, { seed: 'r', maxOodActionShare: 0.43 }).verdict).toBe('ship')
  })
})

describe('verdict rule 2: ship', () => {
  it('ships with enough episodes, a significant improvement and nothing significantly worse', () => {
    const s = rollup(times(12, better), { seed: 'r' })
    expect(s).toMatchObject({ verdict: 'ship', recommend: 'ship', min_episodes: 10, episodes_needed: null })
    expect(s.reward_mean).toMatchObject({ delta: 1, n: 12, ci_low: 1, ci_high: 1, significant: true, method: 'bootstrap_paired', p_value: null })
    expect(s.reasons).toEqual([
      'Significantly better: mean reward 15.5 -> 16.5 (+1, 95% interval +1 to +1, n=12).',
      '1 of 1 comparable metric improved on the point estimates (ship needs two thirds), and neither success rate nor collision rate got worse.',
      '12 episodes done, at least the 10 required (min_episodes); no metric is significantly worse.',
    ])
  })

  it('honours min_episodes', () => {
    expect(rollup(times(3, better), { seed: 'r', minEpisodes: 3 }).verdict).toBe('ship')
  })
})

describe('verdict rule 3: inconclusive', () => {
  it('with too few episodes, and says how many are needed', () => {
    const s = rollup(times(5, better), { seed: 'r' })
    expect(s).toMatchObject({ verdict: 'inconclusive', recommend: 'hold', episodes_needed: 10 })
    expect(s.reasons).toContain('Only 5 episodes done; ship needs at least 10 (min_episodes).')
  })

  it('with too few episodes and nothing better, gives no count: more episodes of no effect settle nothing', () => {
    // The candidate copies every outcome (no _outcome): all deltas are 0, nothing is undecided with an effect.
    const same = (i: number) => done({ success_baseline: i % 2 === 0, success_candidate: i % 2 === 0, reward_total_baseline: i, reward_total_candidate: i })
    const s = rollup(times(4, same), { seed: 'r' })
    expect(s).toMatchObject({ verdict: 'inconclusive', episodes_needed: null })
    expect(s.reasons).toContain('Only 4 episodes done; ship needs at least 10 (min_episodes).')
  })

  it('with no significant improvement, estimating episodes_needed for the most important undecided metric', () => {
    const deltas = [1.5, -1, 2, -0.5, 1, -1.5, 0.5, 2.5, -2, 1, 0, 0.5]
    const s = rollup(deltas.map((d, i) => done({ reward_total_baseline: i, reward_total_candidate: i + d })), { seed: 'r' })
    expect(s.reward_mean.significant).toBe(false)
    expect(s.verdict).toBe('inconclusive')
    const mean = deltas.reduce((a, b) => a + b, 0) / deltas.length
    const sd = Math.sqrt(deltas.reduce((a, d) => a + (d - mean) ** 2, 0) / (deltas.length - 1))
    expect(s.episodes_needed).toBe(pairedMeanSampleSize(sd, mean))
    expect(s.reasons[0]).toMatch(/^No metric is significantly better: mean reward/)
    expect(s.reasons.at(-1)).toBe(
      `About ${s.episodes_needed} paired episodes would resolve mean reward at its observed effect (${
        formatDelta('reward_mean', s.reward_mean.delta)
      }) with 80% power at the two-sided 5% level.`,
    )
  })

  it('success goes first for episodes_needed, through the McNemar sample size', () => {
    const rows = times(
      12,
      (i) => done({ success_baseline: i < 6, success_candidate: i < 6 ? i !== 0 : i < 8, reward_total_baseline: 0, reward_total_candidate: i % 2 ? 1 : -0.5 }),
    )
    const s = rollup(rows, { seed: 'r' })
    expect(s.verdict).toBe('inconclusive')
    expect(s.success_rate).toMatchObject({ n: 12, significant: false })
    expect(s.success_rate.delta).toBeCloseTo(1 / 12, 15)
    // discordant share 3/12, delta 1/12 -> Connor's formula
    expect(s.episodes_needed).toBe(281) // Connor's formula with scipy's norm.ppf: discordant share 3/12, delta 1/12
    expect(s.reasons.at(-1)).toContain('would resolve success rate')
  })

  it('when a metric other than success and collisions is significantly worse', () => {
    const s = rollup(
      times(12, (i) => done({ reward_total_baseline: i, reward_total_candidate: i + 1, time_to_goal_s_baseline: 5, time_to_goal_s_candidate: 6 })),
      { seed: 'r' },
    )
    expect(s.verdict).toBe('inconclusive')
    expect(s.reasons[0]).toBe('Time to goal (s) is significantly worse: 5 -> 6 (+1, 95% interval +1 to +1, n=12).')
  })

  it('when success is worse on the point estimate only', () => {
    const rows = times(12, (i) => done({ success_baseline: i === 0, success_candidate: false, reward_total_baseline: 0, reward_total_candidate: 1 }))
    const s = rollup(rows, { seed: 'r' })
    expect(s.success_rate.significant).toBe(false)
    expect(s.verdict).toBe('inconclusive')
    expect(s.reasons).toContain(
      `Success rate got worse on the point estimate, though not significantly: ${significant(100 / 12)}% -> 0% (${
        significant(-100 / 12, true)
      } pp, 95% interval ${formatDelta('success_rate', s.success_rate.ci_low)} to ${formatDelta('success_rate', s.success_rate.ci_high)}, n=12).`,
    )
  })

  it('when nothing can be compared', () => {
    const s = rollup(times(12, () => done({ steps: 3 })), { seed: 'r' })
    expect(s).toMatchObject({ verdict: 'inconclusive', metric_total: 0, episodes_needed: null })
    expect(s.reasons).toEqual(['No metric could be compared: no done episode has both a baseline and a candidate value.'])
  })
})

describe('paired statistics in the summary', () => {
  it('counts provenance over the pairs and gives McNemar p for the binary metrics', () => {
    const rows = times(
      10,
      (i) =>
        done({
          success_baseline: false,
          success_candidate: i < 7,
          outcome_source: { success: i < 9 ? 'reported' : 'recorded' },
          reward_total_baseline: 1,
          reward_total_candidate: 1,
        }),
    )
    const s = rollup(rows, { seed: 'r' })
    expect(s.success_rate.candidate_source).toEqual({ reported: 9, recorded: 1 })
    expect(s.success_rate.p_value).toBeCloseTo(2 * 0.5 ** 7 - 0.5 ** 7, 15) // 7 discordant pairs, all one way
    expect(s.reward_mean).toMatchObject({ p_value: null, ci_low: 0, ci_high: 0, significant: false })
  })

  it('has no interval below two pairs', () => {
    const s = rollup([done({ reward_total_baseline: 1, reward_total_candidate: 2, success_baseline: true, success_candidate: false })], { seed: 'r' })
    expect(s.reward_mean).toMatchObject({ n: 1, ci_low: null, ci_high: null, significant: null })
    expect(s.success_rate).toMatchObject({ n: 1, ci_low: null, ci_high: null, significant: null, p_value: 0.5 })
  })

  it('is deterministic for a seed and differs between seeds', () => {
    const rows = times(30, (i) => done({ reward_total_baseline: Math.sin(i) * 10, reward_total_candidate: Math.cos(i) * 10 }))
    const a = JSON.stringify(rollup(rows, { seed: 'run-a' }))
    expect(JSON.stringify(rollup(rows, { seed: 'run-a' }))).toBe(a)
    expect(JSON.stringify(rollup(rows, { seed: 'run-b' }))).not.toBe(a)
  })

  it('writes small deltas with their sign', () => {
    expect([significant(-0.0004, true), significant(0.000412, true), significant(1234.56), significant(2.345, true)]).toEqual([
      '-0.0004',
      '+0.000412',
      '1235',
      '+2.35',
    ])
    expect(formatDelta('success_rate', -0.000004)).toBe('-0.0004 pp')
  })
})

describe('means of equal values', () => {
  it('are those values exactly, so an OOD share at max_ood_action_share does not hold', () => {
    // Twelve 0.06s summed left to right make 0.7200000000000002, and /12 0.06000000000000002 > 0.06.
    const rows = times(12, (i) => done({ reward_total_baseline: i, reward_total_candidate: i + 1, ood_action_share_candidate: 0.06, action_l2_mean: 0.1 }))
    const s = rollup(rows, { seed: 'r', maxOodActionShare: 0.06 })
    expect(s.action_divergence).toMatchObject({ ood_action_share_mean: 0.06, l2_mean: 0.1, max_ood_action_share: 0.06 })
    expect(s.verdict).toBe('ship')
    expect(rollup(rows, { seed: 'r', maxOodActionShare: 0.059 }).verdict).toBe('hold')
  })

  it('give paired means and deltas without summation noise', () => {
    const s = rollup(times(10, () => done({ time_to_goal_s_baseline: 0.1, time_to_goal_s_candidate: 0.7 })), { seed: 'r' })
    expect(s.time_to_goal_s).toMatchObject({ baseline: 0.1, candidate: 0.7, delta: 0.7 - 0.1, n: 10 })
  })
})

describe('what replay measured', () => {
  const source = (reported: boolean) => {
    const label = reported ? 'reported' : 'recorded'
    return { success: label, reward_total: label, collision_count: label, time_to_goal_s: label } as const
  }
  const copied = (i: number) =>
    done({
      success_baseline: true,
      success_candidate: true,
      reward_total_baseline: i,
      reward_total_candidate: i,
      action_l2_mean: 0.25,
      ood_action_share_candidate: 0.1,
      outcome_source: source(false),
    })

  it('says so when the policy reported no outcome: only the actions were measured', () => {
    const s = rollup(times(12, copied), { seed: 'r' })
    expect(s.verdict).toBe('inconclusive')
    expect(s.reasons.at(-1)).toBe(
      "The policy reported no outcomes (no _outcome), so its success, reward, collisions and time to goal are the recording's and cannot differ from it; replay measured only its actions: a mean L2 distance of 0.25 from the recorded actions, 10% of steps outside the recorded action range.",
    )
  })

  it('names the metrics reported only in part, after the reasons that decided', () => {
    const rows = times(
      12,
      (i) => (i < 9 ? done({ ...better(i).metrics, success_baseline: true, success_candidate: true, outcome_source: source(true) }) : copied(i)),
    )
    const s = rollup(rows, { seed: 'r' })
    expect(s.reasons.at(-1)).toBe(
      'Success rate: 9 of 12 candidate values reported, the rest copied; mean reward: 9 of 12 candidate values reported, the rest copied; a copied value cannot differ from the recording.',
    )
    expect(s.reasons.slice(0, -1)).toEqual(rollup(rows.map((r) => ({ ...r, metrics: { ...r.metrics, outcome_source: undefined } })), { seed: 'r' }).reasons)
  })

  it('says when no episode has action metrics to back the outcomes the policy reported', () => {
    const s = rollup(times(12, (i) => done({ ...better(i).metrics, outcome_source: source(true) })), { seed: 'r' })
    expect(s.verdict).toBe('ship')
    expect(s.action_divergence.n).toBe(0)
    expect(s.reasons.at(-1)).toBe(
      "No done episode has action metrics (none of the policy's action keys paired with the recording's): nothing replay measured backs the outcomes the policy reported.",
    )
  })

  it("adds nothing when every candidate outcome was the policy's own and its actions were measured", () => {
    const measured = (i: number) => done({ ...better(i).metrics, action_l2_mean: 0.1, outcome_source: source(true) })
    const s = rollup(times(12, measured), { seed: 'r' })
    expect(s.reasons).toEqual(rollup(times(12, (i) => done({ ...better(i).metrics, action_l2_mean: 0.1 })), { seed: 'r' }).reasons)
    expect(s.reasons).toHaveLength(3)
  })
})
