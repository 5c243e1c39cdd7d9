import type { MetricBlob } from './metric-blob.ts'

/** Status of one eval result row (contract, "Eval-run endpoints"). */
export type ResultStatus = 'pending' | 'done' | 'failed' | 'skipped'

/** The part of an eval result row the rollup reads. */
export interface RollupRow {
  status: ResultStatus
  metrics: MetricBlob | null
}

const STATUSES: ReadonlyArray<ResultStatus> = ['pending', 'done', 'failed', 'skipped']

/** Names of the rollup metrics, in the order the summary lists them. */
export type MetricName = 'success_rate' | 'reward_mean' | 'collision_rate' | 'time_to_goal_s' | 'ood_action_share'

/**
 * One metric of the rollup table: its summary key, the metric-blob column
 * stem it reads (`<column>_baseline` / `<column>_candidate`), which way is
 * better, and a label for the portal and the CLI.
 *
 * @example
 * for (const m of METRICS) console.log(m.label, summary[m.name].delta, m.direction)
 */
export interface MetricSpec {
  name: MetricName
  column: 'success' | 'reward_total' | 'collision_count' | 'time_to_goal_s' | 'ood_action_share'
  direction: 'higher' | 'lower'
  label: string
}

/** The contract's rollup table, in summary order. */
export const METRICS: ReadonlyArray<MetricSpec> = [
  { name: 'success_rate', column: 'success', direction: 'higher', label: 'success rate' },
  { name: 'reward_mean', column: 'reward_total', direction: 'higher', label: 'mean reward' },
  { name: 'collision_rate', column: 'collision_count', direction: 'lower', label: 'collision rate' },
  { name: 'time_to_goal_s', column: 'time_to_goal_s', direction: 'lower', label: 'time to goal (s)' },
  { name: 'ood_action_share', column: 'ood_action_share', direction: 'lower', label: 'OOD action share' },
]

/**
 * One metric of the summary. `delta = candidate - baseline`; `baseline` is
 * null when no done row carries a value, and then `delta` and
 * `delta_is_better` are null too. `delta_is_better` is false for a zero delta.
 */
export interface MetricSummary {
  baseline: number | null
  candidate: number | null
  delta: number | null
  delta_is_better: boolean | null
}

/** How many result rows the rollup saw, per status (an extra, informative key). */
export interface EpisodeCounts {
  total: number
  done: number
  failed: number
  skipped: number
  pending: number
}

/** The finalize body's `summary` (spec, "Rollup summary"; contract, "Rollup"). */
export type RollupSummary = { [K in MetricName]: MetricSummary } & {
  better_count: number
  metric_total: number
  recommend: 'ship' | 'hold'
  episodes: EpisodeCounts
}

/**
 * One episode's contribution to a metric, or null when the column is absent
 * or null. Success counts as 1/0 and a collision count as "had any" 1/0, so
 * every metric is then a plain mean. Types are rechecked because stored blobs
 * are read back from the database, not from the validator.
 */
function episodeValue(column: MetricSpec['column'], raw: unknown): number | null {
  if (column === 'success') return raw === true ? 1 : raw === false ? 0 : null
  if (typeof raw !== 'number' || !Number.isFinite(raw)) return null
  if (column === 'collision_count') return raw > 0 ? 1 : 0
  return raw
}

/** Turns -0 into 0 and keeps an overflowed value finite, so JSON never prints null for it. */
function clean(x: number): number {
  if (x === 0) return 0
  if (x === Infinity) return Number.MAX_VALUE
  if (x === -Infinity) return -Number.MAX_VALUE
  return x
}

/** Plain left-to-right mean; divides first only if the plain sum overflowed. */
function mean(values: number[]): number | null {
  if (values.length === 0) return null
  let sum = 0
  for (const x of values) sum += x
  if (Number.isFinite(sum)) return clean(sum / values.length)
  let scaled = 0
  for (const x of values) scaled += x / values.length
  return clean(scaled)
}

function summarize(spec: MetricSpec, done: ReadonlyArray<MetricBlob>): MetricSummary {
  const side = (suffix: 'baseline' | 'candidate') =>
    mean(done.map((m) => episodeValue(spec.column, m[`${spec.column}_${suffix}`])).filter((x) => x !== null))
  const baseline = side('baseline')
  const candidate = side('candidate')
  if (baseline === null || candidate === null) return { baseline, candidate, delta: null, delta_is_better: null }
  const delta = clean(candidate - baseline)
  const delta_is_better = delta === 0 ? false : spec.direction === 'higher' ? delta > 0 : delta < 0
  return { baseline, candidate, delta, delta_is_better }
}

/** Worse means a non-zero delta in the wrong direction; an unchanged metric is not worse. */
function gotWorse(m: MetricSummary): boolean {
  return m.delta_is_better === false && m.delta !== 0
}

/**
 * Rolls the result rows of an eval run up into the finalize summary. Pure:
 * the same rows give the same summary. Only `done` rows with a metric blob
 * feed the metrics; a `failed` row anywhere forces `hold`.
 *
 * `recommend` is `ship` only when at least one metric has a verdict, at least
 * two thirds of those are better (`3 * better >= 2 * total`), neither
 * `success_rate` nor `collision_rate` got worse, and no row failed.
 *
 * @example
 * rollup([{ status: 'done', metrics: { success_baseline: false, success_candidate: true } }])
 * // success_rate: { baseline: 0, candidate: 1, delta: 1, delta_is_better: true }, recommend: 'ship', ...
 */
export function rollup(rows: ReadonlyArray<RollupRow>): RollupSummary {
  const episodes: EpisodeCounts = { total: rows.length, done: 0, failed: 0, skipped: 0, pending: 0 }
  const done: MetricBlob[] = []
  for (const row of rows) {
    if (STATUSES.includes(row.status)) episodes[row.status] += 1
    if (row.status === 'done' && row.metrics) done.push(row.metrics)
  }
  const metrics = {} as { [K in MetricName]: MetricSummary }
  for (const spec of METRICS) metrics[spec.name] = summarize(spec, done)
  const verdicts = METRICS.map((spec) => metrics[spec.name].delta_is_better).filter((b) => b !== null)
  const metric_total = verdicts.length
  const better_count = verdicts.filter((b) => b).length
  const ship =
    metric_total >= 1 &&
    3 * better_count >= 2 * metric_total &&
    !gotWorse(metrics.success_rate) &&
    !gotWorse(metrics.collision_rate) &&
    episodes.failed === 0
  return { ...metrics, better_count, metric_total, recommend: ship ? 'ship' : 'hold', episodes }
}
