import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { MetricBlob } from './metric-blob.ts'
import { type MetricName, rollup, type RollupRow } from './rollup.ts'

// Values: mostly a few shared constants (so ties and zero deltas are common),
// sometimes arbitrary doubles in a range where a plain sum cannot overflow.
const orNull = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 })
const real = fc.oneof(fc.constantFrom(0, -0, 1, 2.5, -3), fc.double({ min: -1e6, max: 1e6, noNaN: true }))
const nonNegative = fc.oneof(fc.constantFrom(0, 1, 7.5), fc.double({ min: 0, max: 1e4, noNaN: true }))
const share = fc.oneof(fc.constantFrom(0, 0.25, 1), fc.double({ min: 0, max: 1, noNaN: true }))
const count = fc.oneof(fc.constantFrom(0, 1), fc.nat(5))

const blob: fc.Arbitrary<MetricBlob> = fc.record(
  {
    steps: fc.nat(500),
    success_baseline: orNull(fc.boolean()),
    success_candidate: orNull(fc.boolean()),
    reward_total_baseline: orNull(real),
    reward_total_candidate: orNull(real),
    collision_count_baseline: orNull(count),
    collision_count_candidate: orNull(count),
    time_to_goal_s_baseline: orNull(nonNegative),
    time_to_goal_s_candidate: orNull(nonNegative),
    ood_action_share_baseline: orNull(share),
    ood_action_share_candidate: orNull(share),
  },
  { requiredKeys: [] },
)
const row: fc.Arbitrary<RollupRow> = fc.record({
  status: fc.constantFrom('done', 'done', 'done', 'failed', 'skipped', 'pending'),
  metrics: fc.option(blob, { nil: null, freq: 8 }),
})
const rows = fc.array(row, { maxLength: 12 })

/**
 * The contract table restated column by column, as arrays: obviously right,
 * not clever. Means are over the pairs (done rows where both sides have a
 * value); with no pair at all each side is the mean of its own values and
 * nothing is compared.
 */
function reference(input: RollupRow[]) {
  const blobs = input.filter((r) => r.status === 'done' && r.metrics !== null).map((r) => r.metrics as MetricBlob)
  // A mean as the contract means it, to the last bit: the sum compensated for rounding (Neumaier),
  // divided by the count, never outside the values' range (twelve 0.06s average to 0.06, not
  // 0.06000000000000002). `+ 0` turns -0 into 0: the rollup never reports -0.
  const average = (xs: number[]) => {
    if (xs.length === 0) return null
    let sum = 0
    let lost = 0
    for (const x of xs) {
      const t = sum + x
      lost += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum
      sum = t
    }
    return Math.min(Math.max(...xs), Math.max(Math.min(...xs), (sum + lost) / xs.length)) + 0
  }
  const value = (name: string, m: MetricBlob, suffix: string): number | null => {
    const stem = {
      success_rate: 'success',
      reward_mean: 'reward_total',
      collision_rate: 'collision_count',
      time_to_goal_s: 'time_to_goal_s',
      ood_action_share: 'ood_action_share',
    }[name]
    const raw = m[`${stem}_${suffix}`]
    if (raw === null || raw === undefined) return null
    if (name === 'success_rate') return raw ? 1 : 0
    if (name === 'collision_rate') return (raw as number) >= 1 ? 1 : 0
    return raw as number
  }
  const higherIsBetter = ['success_rate', 'reward_mean']
  const summary: Record<string, { baseline: number | null; candidate: number | null; delta: number | null; delta_is_better: boolean | null }> = {}
  for (const name of ['success_rate', 'reward_mean', 'collision_rate', 'time_to_goal_s', 'ood_action_share']) {
    const pairs = blobs.filter((m) => value(name, m, 'baseline') !== null && value(name, m, 'candidate') !== null)
    const from = pairs.length > 0 ? pairs : blobs
    const baseline = average(from.map((m) => value(name, m, 'baseline')).filter((x) => x !== null))
    const candidate = average(from.map((m) => value(name, m, 'candidate')).filter((x) => x !== null))
    const delta = pairs.length === 0 ? null : candidate! - baseline! + 0
    let better: boolean | null = null
    if (delta !== null) better = higherIsBetter.includes(name) ? delta > 0 : delta < 0
    summary[name] = { baseline, candidate, delta, delta_is_better: better }
  }
  const verdicts = Object.values(summary).filter((m) => m.delta_is_better !== null)
  const metric_total = verdicts.length
  const better_count = verdicts.filter((m) => m.delta_is_better === true).length
  const successFell = (summary.success_rate.delta ?? 0) < 0
  const collisionsRose = (summary.collision_rate.delta ?? 0) > 0
  const anyFailed = input.some((r) => r.status === 'failed')
  const majority = metric_total > 0 && better_count >= Math.ceil((metric_total * 2) / 3) && !successFell && !collisionsRose && !anyFailed
  return { summary, better_count, metric_total, majority }
}

describe('rollup (property)', () => {
  it('matches the reference computation on random rows', () => {
    fc.assert(
      fc.property(rows, (input) => {
        const s = rollup(input, { seed: 'property', minEpisodes: 1 })
        const expected = reference(input)
        for (const [name, m] of Object.entries(expected.summary)) {
          const { baseline, candidate, delta, delta_is_better } = s[name as keyof typeof expected.summary & MetricName]
          expect({ baseline, candidate, delta, delta_is_better }).toEqual(m)
        }
        expect({ better_count: s.better_count, metric_total: s.metric_total }).toEqual({
          better_count: expected.better_count,
          metric_total: expected.metric_total,
        })
        // recommend follows the verdict, and ship still needs the spec's majority rule.
        expect(s.recommend).toBe(s.verdict === 'ship' ? 'ship' : 'hold')
        if (s.verdict === 'ship') expect(expected.majority).toBe(true)
        expect(s.episodes.total).toBe(input.length)
      }),
      { numRuns: 1000 },
    )
  })

  it('keeps its invariants: no -0, verdict iff delta, null baseline means null delta', () => {
    fc.assert(
      fc.property(rows, (input) => {
        const s = rollup(input)
        for (const m of [s.success_rate, s.reward_mean, s.collision_rate, s.time_to_goal_s, s.ood_action_share]) {
          for (const x of [m.baseline, m.candidate, m.delta]) expect(Object.is(x, -0)).toBe(false)
          expect(m.delta === null).toBe(m.delta_is_better === null)
          if (m.baseline === null || m.candidate === null) expect(m.delta).toBeNull()
          if (m.delta === 0) expect(m.delta_is_better).toBe(false)
        }
        expect(s.better_count).toBeLessThanOrEqual(s.metric_total)
        if (input.some((r) => r.status === 'failed')) expect(s.recommend).toBe('hold')
      }),
      { numRuns: 500 },
    )
  })

  it('ignores skipped and pending rows whatever their metrics', () => {
    const ignored = fc.array(fc.record({ status: fc.constantFrom('skipped' as const, 'pending' as const), metrics: fc.option(blob, { nil: null }) }))
    fc.assert(
      fc.property(rows, ignored, fc.nat(), (input, extra, at) => {
        const mixed = [...input]
        mixed.splice(at % (input.length + 1), 0, ...extra)
        const { episodes: _a, ...before } = rollup(input, { seed: 's' })
        const { episodes: _b, ...after } = rollup(mixed, { seed: 's' })
        expect(after).toEqual(before)
      }),
    )
  })
})
