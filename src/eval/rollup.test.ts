import { describe, expect, it } from 'vitest'
import type { MetricBlob } from './metric-blob.ts'
import { METRICS, type MetricSummary, rollup, type RollupRow } from './rollup.ts'

const done = (metrics: MetricBlob | null): RollupRow => ({ status: 'done', metrics })
const nothing = { baseline: null, candidate: null, delta: null, delta_is_better: null }
/** The spec's four keys of a metric (their meaning is unchanged; the contract adds keys beside them). */
const point = ({ baseline, candidate, delta, delta_is_better }: MetricSummary) => ({ baseline, candidate, delta, delta_is_better })
/** Twelve copies of a row: identical deltas make every non-zero delta significant, and 12 >= min_episodes. */
const twelve = (row: RollupRow): RollupRow[] => Array.from({ length: 12 }, () => row)

/** A done row where each listed metric moves by the given amount (baseline 10). */
const moved = (moves: { reward?: number; time?: number; ood?: number }): RollupRow =>
  done({
    reward_total_baseline: 10,
    reward_total_candidate: moves.reward === undefined ? undefined : 10 + moves.reward,
    time_to_goal_s_baseline: 10,
    time_to_goal_s_candidate: moves.time === undefined ? undefined : 10 + moves.time,
    ood_action_share_baseline: 0.2,
    ood_action_share_candidate: moves.ood === undefined ? undefined : 0.2 + moves.ood / 20,
  })

describe('rollup', () => {
  it('holds with no verdicts when every row failed', () => {
    const s = rollup([
      { status: 'failed', metrics: null },
      { status: 'failed', metrics: { success_baseline: false, success_candidate: true } },
    ])
    for (const m of METRICS) expect(point(s[m.name])).toEqual(nothing)
    expect(s).toMatchObject({ better_count: 0, metric_total: 0, recommend: 'hold' })
    expect(s.episodes).toEqual({ total: 2, done: 0, failed: 2, skipped: 0, pending: 0 })
  })

  it('holds with no verdicts when every row is pending, and on no rows at all', () => {
    const pending = rollup([{ status: 'pending', metrics: { reward_total_baseline: 1, reward_total_candidate: 2 } }])
    expect(pending).toMatchObject({ reward_mean: nothing, metric_total: 0, recommend: 'hold' })
    expect(pending.episodes.pending).toBe(1)
    expect(rollup([])).toMatchObject({ metric_total: 0, better_count: 0, recommend: 'hold' })
  })

  it('keeps the candidate but nulls delta and verdict when the baseline is absent', () => {
    const s = rollup([done({ ood_action_share_candidate: 0.2 }), done({ ood_action_share_candidate: 0.4, ood_action_share_baseline: null })])
    expect(point(s.ood_action_share)).toEqual({ baseline: null, candidate: 0.30000000000000004, delta: null, delta_is_better: null })
    expect(s.ood_action_share.n).toBe(0)
    expect(s.metric_total).toBe(0)
  })

  it('means are over the pairs (rows with both values) and count success as 1/0', () => {
    const s = rollup([
      done({ success_baseline: true, success_candidate: true }),
      done({ success_baseline: false, success_candidate: true }),
      done({ success_baseline: null, success_candidate: false }),
      done({ success_baseline: false }),
    ])
    expect(point(s.success_rate)).toEqual({ baseline: 0.5, candidate: 1, delta: 0.5, delta_is_better: true })
    expect(s.success_rate.n).toBe(2)
  })

  it('gives false, never true or null, for zero deltas and holds', () => {
    const same = {
      success_baseline: true,
      success_candidate: true,
      reward_total_baseline: 3,
      reward_total_candidate: 3,
      collision_count_baseline: 1,
      collision_count_candidate: 4,
    }
    const s = rollup([done(same)])
    expect(point(s.success_rate)).toEqual({ baseline: 1, candidate: 1, delta: 0, delta_is_better: false })
    expect(point(s.collision_rate)).toEqual({ baseline: 1, candidate: 1, delta: 0, delta_is_better: false })
    expect(s).toMatchObject({ metric_total: 3, better_count: 0, recommend: 'hold' })
  })

  it('normalizes a -0 delta to 0', () => {
    const s = rollup([done({ reward_total_baseline: 0, reward_total_candidate: -0 })])
    expect(Object.is(s.reward_mean.delta, 0)).toBe(true)
    expect(Object.is(s.reward_mean.candidate, 0)).toBe(true)
    expect(s.reward_mean.delta_is_better).toBe(false)
  })

  it('ships at exactly two thirds better (3 verdicts, 2 better, 1 worse but not significantly)', () => {
    // ood moves +0.3 and -0.2 in turn: worse on the mean, its interval includes 0.
    const rows = Array.from({ length: 12 }, (_, i) => moved({ reward: 1, time: -1, ood: i % 2 === 0 ? 3 : -2 }))
    const s = rollup(rows)
    expect(s).toMatchObject({ metric_total: 3, better_count: 2, recommend: 'ship', verdict: 'ship' })
    expect(s.ood_action_share).toMatchObject({ delta_is_better: false, significant: false })
  })

  it('ships when success is unchanged (delta 0 is not worse) and two of three improved', () => {
    const row = moved({ reward: 2, time: -2 })
    const s = rollup(twelve({ ...row, metrics: { ...row.metrics, success_baseline: true, success_candidate: true } }))
    expect(s).toMatchObject({ metric_total: 3, better_count: 2, recommend: 'ship', verdict: 'ship' })
  })

  it('holds just under two thirds (5 verdicts, 3 better)', () => {
    const row = moved({ reward: 1, time: -1, ood: 1 })
    const s = rollup([{
      ...row,
      metrics: { ...row.metrics, success_baseline: false, success_candidate: true, collision_count_baseline: 0, collision_count_candidate: 0 },
    }])
    expect(s).toMatchObject({ metric_total: 5, better_count: 3, recommend: 'hold' })
  })

  it('a worse success_rate blocks ship despite 4 of 5 better', () => {
    const row = moved({ reward: 1, time: -1, ood: -1 })
    const s = rollup([{
      ...row,
      metrics: { ...row.metrics, success_baseline: true, success_candidate: false, collision_count_baseline: 2, collision_count_candidate: 0 },
    }])
    expect(s).toMatchObject({ metric_total: 5, better_count: 4, recommend: 'hold' })
    expect(point(s.success_rate)).toEqual({ baseline: 1, candidate: 0, delta: -1, delta_is_better: false })
  })

  it('a worse collision_rate blocks ship despite 4 of 5 better', () => {
    const row = moved({ reward: 1, time: -1, ood: -1 })
    const s = rollup([{
      ...row,
      metrics: { ...row.metrics, success_baseline: false, success_candidate: true, collision_count_baseline: 0, collision_count_candidate: 1 },
    }])
    expect(s).toMatchObject({ metric_total: 5, better_count: 4, recommend: 'hold' })
  })

  it('a failed row blocks ship and its metrics are not counted', () => {
    const good = twelve(moved({ reward: 1, time: -1, ood: -1 }))
    expect(rollup(good).recommend).toBe('ship')
    const s = rollup([...good, { status: 'failed', metrics: { reward_total_baseline: 1000, reward_total_candidate: 0 } }])
    expect(point(s.reward_mean)).toEqual({ baseline: 10, candidate: 11, delta: 1, delta_is_better: true })
    expect(s).toMatchObject({ better_count: 3, metric_total: 3, recommend: 'hold', verdict: 'hold' })
  })

  it('ignores skipped and pending rows and done rows without a blob', () => {
    const good = twelve(moved({ reward: 1, time: -1, ood: -1 }))
    const noise = { reward_total_baseline: 1000, reward_total_candidate: 0 }
    const rows: RollupRow[] = [...good, { status: 'skipped', metrics: noise }, { status: 'pending', metrics: noise }, done(null)]
    const s = rollup(rows)
    const { episodes, reasons, ...rest } = s
    const { episodes: _e, reasons: _r, ...alone } = rollup(good)
    expect(rest).toEqual(alone)
    expect(episodes).toEqual({ total: 15, done: 13, failed: 0, skipped: 1, pending: 1 })
    expect(reasons.at(-1)).toContain('13 episodes done') // a done row counts even without a blob
    expect(s.recommend).toBe('ship')
  })

  it('collision_rate is the share of paired episodes with any collision, and lower is better', () => {
    const counts = [[3, 5], [1, 0], [0, 0], [0, null]] as const
    const s = rollup(counts.map(([b, c]) => done({ collision_count_baseline: b, collision_count_candidate: c })))
    expect(point(s.collision_rate)).toEqual({ baseline: 2 / 3, candidate: 1 / 3, delta: 1 / 3 - 2 / 3, delta_is_better: true })
    const up = rollup([done({ collision_count_baseline: 0, collision_count_candidate: 1 })])
    expect(up.collision_rate).toMatchObject({ delta: 1, delta_is_better: false })
  })

  it('lower time to goal is better, higher reward is better', () => {
    const s = rollup([done({ time_to_goal_s_baseline: 10, time_to_goal_s_candidate: 12, reward_total_baseline: 1, reward_total_candidate: 0.5 })])
    expect(s.time_to_goal_s).toMatchObject({ delta: 2, delta_is_better: false })
    expect(s.reward_mean).toMatchObject({ delta: -0.5, delta_is_better: false })
  })

  it('stays finite (and JSON-safe) when reward totals overflow a plain sum', () => {
    const max = Number.MAX_VALUE
    const s = rollup([done({ reward_total_baseline: -max, reward_total_candidate: max }), done({ reward_total_baseline: -max, reward_total_candidate: max })])
    expect(point(s.reward_mean)).toEqual({ baseline: -max, candidate: max, delta: max, delta_is_better: true })
    expect(JSON.parse(JSON.stringify(s))).toEqual(s)
  })

  it('publishes the metric table in summary order with directions', () => {
    expect(METRICS.map((m) => [m.name, m.direction])).toEqual([
      ['success_rate', 'higher'],
      ['reward_mean', 'higher'],
      ['collision_rate', 'lower'],
      ['time_to_goal_s', 'lower'],
      ['ood_action_share', 'lower'],
    ])
  })
})
