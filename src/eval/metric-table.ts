/**
 * The rollup's metric table and the small numeric helpers the summary and
 * the verdict share (kept apart from rollup.ts so verdict.ts needs no import
 * cycle).
 */
import type { MetricColumn, SideColumns } from './columns.ts'
import type { PairedTable } from './stats/binary.ts'

/** Names of the rollup metrics, in the order the summary lists them. */
export type MetricName = 'success_rate' | 'reward_mean' | 'collision_rate' | 'time_to_goal_s' | 'ood_action_share'

/**
 * One metric of the rollup table: its summary key, the metric-blob column
 * stem it reads (`<column>_baseline` / `<column>_candidate`), which way is
 * better, how its interval is made, and a label for the portal and the CLI.
 *
 * @example
 * for (const m of METRICS) console.log(m.label, summary[m.name].delta, m.direction)
 */
export interface MetricSpec {
  /** Key of the metric in the summary. */
  name: MetricName
  /** Metric-blob column stem the metric reads. */
  column: MetricColumn
  /** Which way is better for the candidate. */
  direction: 'higher' | 'lower'
  /** How the interval of the paired delta is made. */
  method: 'newcombe_paired' | 'bootstrap_paired'
  /** Human-readable name for the portal and the CLI. */
  label: string
}

/** The contract's rollup table, in summary order. */
export const METRICS: ReadonlyArray<MetricSpec> = [
  { name: 'success_rate', column: 'success', direction: 'higher', method: 'newcombe_paired', label: 'success rate' },
  { name: 'reward_mean', column: 'reward_total', direction: 'higher', method: 'bootstrap_paired', label: 'mean reward' },
  { name: 'collision_rate', column: 'collision_count', direction: 'lower', method: 'newcombe_paired', label: 'collision rate' },
  { name: 'time_to_goal_s', column: 'time_to_goal_s', direction: 'lower', method: 'bootstrap_paired', label: 'time to goal (s)' },
  { name: 'ood_action_share', column: 'ood_action_share', direction: 'lower', method: 'bootstrap_paired', label: 'OOD action share' },
]

/** Turns -0 into 0 and keeps an overflowed value finite, so JSON never prints null for it. */
export function clean(x: number): number {
  if (x === 0) return 0
  if (x === Infinity) return Number.MAX_VALUE
  if (x === -Infinity) return -Number.MAX_VALUE
  return x
}

/**
 * Mean of the non-NaN values of `xs` at `at` (all when omitted): a
 * compensated (Neumaier) sum divided by the count, kept within the values'
 * range as a mean is. So k of n ones average to k/n as division gives it, and
 * equal values to exactly that value (twelve 0.06s summed left to right and
 * divided by 12 give 0.06000000000000002, above a 0.06 threshold). Divides
 * first only if the sum overflowed.
 */
export function meanOf(xs: Float64Array, at?: Int32Array): number | null {
  const count = at ? at.length : xs.length
  let sum = 0
  let compensation = 0
  let low = Infinity
  let high = -Infinity
  let n = 0
  for (let k = 0; k < count; k++) {
    const x = xs[at ? at[k]! : k]!
    if (x === x) {
      const t = sum + x
      compensation += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum
      sum = t
      if (x < low) low = x
      if (x > high) high = x
      n++
    }
  }
  if (n === 0) return null
  const total = sum + compensation
  if (Number.isFinite(total)) return clean(Math.min(high, Math.max(low, total / n)))
  let scaled = 0
  for (let k = 0; k < count; k++) {
    const x = xs[at ? at[k]! : k]!
    if (x === x) scaled += x / n
  }
  return clean(scaled)
}

/** The paired 2x2 table of a binary metric over its pairs (candidate first). */
export function pairedTable(side: SideColumns, pairs: Int32Array): PairedTable {
  const table = { both: 0, candidateOnly: 0, baselineOnly: 0, neither: 0 }
  for (let k = 0; k < pairs.length; k++) {
    const i = pairs[k]!
    const c = side.candidate[i] === 1
    const b = side.baseline[i] === 1
    if (c && b) table.both++
    else if (c) table.candidateOnly++
    else if (b) table.baselineOnly++
    else table.neither++
  }
  return table
}

/** Per-pair differences candidate - baseline. */
export function differences(side: SideColumns, pairs: Int32Array): Float64Array {
  const d = new Float64Array(pairs.length)
  for (let k = 0; k < pairs.length; k++) d[k] = side.candidate[pairs[k]!]! - side.baseline[pairs[k]!]!
  return d
}
