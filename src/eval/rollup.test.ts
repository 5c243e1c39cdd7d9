import { describe, expect, it } from 'vitest'
import type { MetricBlob } from './metric-blob.ts'
import { METRICS, rollup, type RollupRow } from './rollup.ts'

const done = (metrics: MetricBlob | null): RollupRow => ({ status: 'done', metrics })
const nothing = { baseline: null, candidate: null, delta: null, delta_is_better: null }

/** A done row where each listed metric moves by the given amount (baseline 10). */
const moved = (moves: { reward?: number; time?: number; ood?: number }): RollupRow =>
  done({
    reward_total_baseline: 10,
    reward_total_candidate: moves.reward === undefined ? undefined : 10 + moves.reward,
    time_to_goal_s_baseline: 10,
    time_to_goal_s_candidate: moves.time === undefined ? undefined : 10 + moves.time,
    ood_action_share_baseline: 0.5,
    ood_action_share_candidate: moves.ood === undefined ? undefined : 0.5 + moves.ood / 10,
  })

describe('rollup', () => {
  it('holds with no verdicts when every row failed', () => {
    const s = rollup([
      { status: 'failed', metrics: null },
      { status: 'failed', metrics: { success_baseline: false, success_candidate: true } },
    ])
    for (const m of METRICS) expect(s[m.name]).toEqual(nothing)
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
    expect(s.ood_action_share).toEqual({ baseline: null, candidate: 0.30000000000000004, delta: null, delta_is_better: null })
    expect(s.metric_total).toBe(0)
  })

  it('means exclude nulls and count success as 1/0', () => {
    const s = rollup([done({ success_baseline: true, success_candidate: true }), done({ success_baseline: null, success_candidate: true }), done({ success_baseline: false })])
    expect(s.success_rate).toEqual({ baseline: 0.5, candidate: 1, delta: 0.5, delta_is_better: true })
  })

  it('gives false, never true or null, for zero deltas and holds', () => {
    const same = { success_baseline: true, success_candidate: true, reward_total_baseline: 3, reward_total_candidate: 3, collision_count_baseline: 1, collision_count_candidate: 4 }
    const s = rollup([done(same)])
    expect(s.success_rate).toEqual({ baseline: 1, candidate: 1, delta: 0, delta_is_better: false })
    expect(s.collision_rate).toEqual({ baseline: 1, candidate: 1, delta: 0, delta_is_better: false })
    expect(s).toMatchObject({ metric_total: 3, better_count: 0, recommend: 'hold' })
  })

  it('normalizes a -0 delta to 0', () => {
    const s = rollup([done({ reward_total_baseline: 0, reward_total_candidate: -0 })])
    expect(Object.is(s.reward_mean.delta, 0)).toBe(true)
    expect(Object.is(s.reward_mean.candidate, 0)).toBe(true)
    expect(s.reward_mean.delta_is_better).toBe(false)
  })

  it('ships at exactly two thirds better (3 verdicts, 2 better, 1 worse elsewhere)', () => {
    const s = rollup([moved({ reward: 1, time: -1, ood: 1 })])
    expect(s).toMatchObject({ metric_total: 3, better_count: 2, recommend: 'ship' })
    expect(s.ood_action_share.delta_is_better).toBe(false)
  })

  it('ships when success is unchanged (delta 0 is not worse) and two of three improved', () => {
    const row = moved({ reward: 2, time: -2 })
    const s = rollup([{ ...row, metrics: { ...row.metrics, success_baseline: true, success_candidate: true } }])
    expect(s).toMatchObject({ metric_total: 3, better_count: 2, recommend: 'ship' })
  })

  it('holds just under two thirds (5 verdicts, 3 better)', () => {
    const row = moved({ reward: 1, time: -1, ood: 1 })
    const s = rollup([{ ...row, metrics: { ...row.metrics, success_baseline: false, success_candidate: true, collision_count_baseline: 0, collision_count_candidate: 0 } }])
    expect(s).toMatchObject({ metric_total: 5, better_count: 3, recommend: 'hold' })
  })

  it('a worse success_rate blocks ship despite 4 of 5 better', () => {
    const row = moved({ reward: 1, time: -1, ood: -1 })
    const s = rollup([{ ...row, metrics: { ...row.metrics, success_baseline: true, success_candidate: false, collision_count_baseline: 2, collision_count_candidate: 0 } }])
    expect(s).toMatchObject({ metric_total: 5, better_count: 4, recommend: 'hold' })
    expect(s.success_rate).toEqual({ baseline: 1, candidate: 0, delta: -1, delta_is_better: false })
  })

  it('a worse collision_rate blocks ship despite 4 of 5 better', () => {
    const row = moved({ reward: 1, time: -1, ood: -1 })
    const s = rollup([{ ...row, metrics: { ...row.metrics, success_baseline: false, success_candidate: true, collision_count_baseline: 0, collision_count_candidate: 1 } }])
    expect(s).toMatchObject({ metric_total: 5, better_count: 4, recommend: 'hold' })
  })

  it('a failed row blocks ship and its metrics are not counted', () => {
    const good = moved({ reward: 1, time: -1, ood: -1 })
    expect(rollup([good]).recommend).toBe('ship')
    const s = rollup([good, { status: 'failed', metrics: { reward_total_baseline: 1000, reward_total_candidate: 0 } }])
    expect(s.reward_mean).toEqual({ baseline: 10, candidate: 11, delta: 1, delta_is_better: true })
    expect(s).toMatchObject({ better_count: 3, metric_total: 3, recommend: 'hold' })
  })

  it('ignores skipped and pending rows and done rows without a blob', () => {
    const good = moved({ reward: 1, time: -1, ood: -1 })
    const noise = { reward_total_baseline: 1000, reward_total_candidate: 0 }
    const rows: RollupRow[] = [good, { status: 'skipped', metrics: noise }, { status: 'pending', metrics: noise }, done(null)]
    const s = rollup(rows)
    expect(s).toEqual({ ...rollup([good]), episodes: { total: 4, done: 2, failed: 0, skipped: 1, pending: 1 } })
    expect(s.recommend).toBe('ship')
  })

  it('collision_rate is the share of episodes with any collision, and lower is better', () => {
    const counts = [[3, 5], [1, 0], [0, 0], [0, null]] as const
    const s = rollup(counts.map(([b, c]) => done({ collision_count_baseline: b, collision_count_candidate: c })))
    expect(s.collision_rate).toEqual({ baseline: 0.5, candidate: 1 / 3, delta: 1 / 3 - 0.5, delta_is_better: true })
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
    expect(s.reward_mean).toEqual({ baseline: -max, candidate: max, delta: max, delta_is_better: true })
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
