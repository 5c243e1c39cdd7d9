/**
 * The finalize summary (spec, "Rollup summary"; contract, "Rollup" and
 * "Paired rollup, uncertainty and the verdict"): per metric the paired means,
 * the delta, a 95% interval of the paired delta and where the candidate
 * values came from; then the spec's counts and `recommend`, and beside them
 * the verdict with its reasons and the action divergence. Pure: the same rows
 * and options give the same summary, byte for byte.
 */
import { columnsFromRows, type EpisodeCounts, type RollupColumns, type RollupRow, type SideColumns, SOURCE } from './columns.ts'
import { mcnemarMidP, newcombePaired } from './stats/binary.ts'
import { bootstrapMeanIntervals } from './stats/bootstrap.ts'
import { seedState } from './stats/rng.ts'
import { clean, differences, meanOf, type MetricName, METRICS, type MetricSpec, pairedTable } from './metric-table.ts'
import { type ActionDivergence, decideVerdict, type Verdict } from './verdict.ts'

export { clean, differences, meanOf, type MetricName, METRICS, type MetricSpec, pairedTable } from './metric-table.ts'

export type { EpisodeCounts, MetricColumn, ResultStatus, RollupRow } from './columns.ts'
export type { ActionDivergence, Verdict } from './verdict.ts'

/**
 * One metric of the summary, over the pairs (done rows with both values).
 * `delta = candidate - baseline`; with no pair at all each side is the mean
 * of its own values (the spec's rule 2: an absent baseline leaves `baseline`,
 * `delta` and `delta_is_better` null) and nothing is compared.
 */
export interface MetricSummary {
  /** Mean of the baseline values over the pairs (or over all baseline values when there is no pair). */
  baseline: number | null
  /** Mean of the candidate values over the pairs (or over all candidate values when there is no pair). */
  candidate: number | null
  /** `candidate - baseline` over the pairs; null without a pair. */
  delta: number | null
  /** False for a zero delta. */
  delta_is_better: boolean | null
  /** Number of pairs. */
  n: number
  /** 95% interval of the paired delta; null when n < 2. */
  ci_low: number | null
  /** Upper end of the 95% interval of the paired delta; null when n < 2. */
  ci_high: number | null
  /** The interval excludes 0; null without an interval. */
  significant: boolean | null
  /** How the interval is made: Newcombe's paired interval for the binary metrics, a seeded paired bootstrap for the means. */
  method: 'newcombe_paired' | 'bootstrap_paired'
  /** Exact mid-p McNemar over the discordant pairs (binary metrics); null otherwise. */
  p_value: number | null
  /** Over the pairs: candidate values the policy reported through `_outcome` vs copied from the baseline. */
  candidate_source: { reported: number; recorded: number }
}

/** The finalize body's `summary`, keys in this order. */
export type RollupSummary = { [K in MetricName]: MetricSummary } & {
  /** Metrics whose delta is better for the candidate (point estimates). */
  better_count: number
  /** Metrics with a delta at all. */
  metric_total: number
  /** The spec's recommendation: `ship` exactly when `verdict` is `ship`. */
  recommend: 'ship' | 'hold'
  /** Result rows by status. */
  episodes: EpisodeCounts
  /** `ship`, `hold` or `inconclusive` (see {@link Verdict}). */
  verdict: Verdict
  /** Plain sentences with the numbers that decided the verdict, most important first. */
  reasons: string[]
  /** The run's `min_episodes` threshold the verdict applied. */
  min_episodes: number
  /** For `inconclusive`: paired episodes that would likely resolve the most important undecided metric; null otherwise. */
  episodes_needed: number | null
  /** How far the candidate's actions strayed from the recorded ones. */
  action_divergence: ActionDivergence
}

/**
 * Knobs of {@link rollup}; an eval run passes its id and the thresholds it was
 * created with, so finalizing again gives the same summary.
 *
 * @example
 * const options: RollupOptions = { seed: run.eval_run_id, minEpisodes: 20 }
 */
export interface RollupOptions {
  /** Seeds the bootstrap: the eval run id (a dry run uses its own fixed string). Default `''`. */
  seed?: string
  /** Done rows needed for `ship` (1..10000, default 10). */
  minEpisodes?: number
  /** Above this mean OOD action share the verdict is `hold` (0..1, default 0.25). */
  maxOodActionShare?: number
}

/** `min_episodes` when an eval run's create body leaves it out. */
export const DEFAULT_MIN_EPISODES = 10
/** `max_ood_action_share` when an eval run's create body leaves it out. */
export const DEFAULT_MAX_OOD_ACTION_SHARE = 0.25

/** Indices of the rows where both sides have a value. */
function pairIndices(side: SideColumns, length: number): Int32Array {
  const out = new Int32Array(length)
  let n = 0
  for (let i = 0; i < length; i++) if (side.baseline[i] === side.baseline[i] && side.candidate[i] === side.candidate[i]) out[n++] = i
  return out.subarray(0, n)
}

function sameIndices(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** The point-estimate part of a metric (the spec's four keys, `n` and the provenance counts). */
function pointEstimate(spec: MetricSpec, side: SideColumns, pairs: Int32Array): MetricSummary {
  const n = pairs.length
  let reported = 0
  let recorded = 0
  for (let k = 0; k < n; k++) {
    const s = side.source[pairs[k]!]
    if (s === SOURCE.reported) reported++
    else if (s === SOURCE.recorded) recorded++
  }
  const rest = { n, ci_low: null, ci_high: null, significant: null, method: spec.method, p_value: null, candidate_source: { reported, recorded } }
  if (n === 0) return { baseline: meanOf(side.baseline), candidate: meanOf(side.candidate), delta: null, delta_is_better: null, ...rest }
  const baseline = meanOf(side.baseline, pairs)!
  const candidate = meanOf(side.candidate, pairs)!
  const delta = clean(candidate - baseline)
  const delta_is_better = delta === 0 ? false : spec.direction === 'higher' ? delta > 0 : delta < 0
  return { baseline, candidate, delta, delta_is_better, ...rest }
}

function withInterval(m: MetricSummary, interval: [number, number] | null): void {
  if (!interval || !Number.isFinite(interval[0]) || !Number.isFinite(interval[1])) return
  m.ci_low = clean(interval[0])
  m.ci_high = clean(interval[1])
  m.significant = m.ci_low > 0 || m.ci_high < 0
}

/**
 * Rolls result rows up into the finalize summary.
 *
 * @example
 * rollup(rows, { seed: evalRunId, minEpisodes: 10, maxOodActionShare: 0.25 }).verdict // 'ship' | 'hold' | 'inconclusive'
 */
export function rollup(rows: ReadonlyArray<RollupRow>, options: RollupOptions = {}): RollupSummary {
  return rollupColumns(columnsFromRows(rows), options)
}

/** `rollup` over columns already laid out (see `columnsFromRows`). */
export function rollupColumns(columns: RollupColumns, options: RollupOptions = {}): RollupSummary {
  const metrics = {} as { [K in MetricName]: MetricSummary }
  const pairsOf = {} as { [K in MetricName]: Int32Array }
  for (const spec of METRICS) {
    const side = columns.metrics[spec.column]
    const pairs = pairIndices(side, columns.length)
    pairsOf[spec.name] = pairs
    const m = pointEstimate(spec, side, pairs)
    if (spec.method === 'newcombe_paired' && pairs.length > 0) {
      const table = pairedTable(side, pairs)
      m.p_value = mcnemarMidP(table.candidateOnly, table.baselineOnly)
      if (pairs.length >= 2) withInterval(m, newcombePaired(table))
    }
    metrics[spec.name] = m
  }
  // Bootstrap metrics over the same pairs share one set of resampled indices (one draw serves them all).
  const state = seedState(options.seed ?? '')
  const pending = METRICS.filter((s) => s.method === 'bootstrap_paired' && pairsOf[s.name].length >= 2)
  while (pending.length > 0) {
    const first = pending[0]!
    const group = pending.filter((s) => sameIndices(pairsOf[s.name], pairsOf[first.name]))
    const intervals = bootstrapMeanIntervals(group.map((s) => differences(columns.metrics[s.column], pairsOf[s.name])), state)
    group.forEach((s, g) => withInterval(metrics[s.name], intervals[g]!))
    for (const s of group) pending.splice(pending.indexOf(s), 1)
  }
  const verdicts = METRICS.map((spec) => metrics[spec.name].delta_is_better).filter((b) => b !== null)
  const metric_total = verdicts.length
  const better_count = verdicts.filter((b) => b).length
  const decision = decideVerdict({
    metrics,
    columns,
    pairsOf,
    better_count,
    metric_total,
    minEpisodes: options.minEpisodes ?? DEFAULT_MIN_EPISODES,
    maxOodActionShare: options.maxOodActionShare ?? DEFAULT_MAX_OOD_ACTION_SHARE,
  })
  return {
    ...metrics,
    better_count,
    metric_total,
    recommend: decision.verdict === 'ship' ? 'ship' : 'hold',
    episodes: columns.episodes,
    verdict: decision.verdict,
    reasons: decision.reasons,
    min_episodes: decision.min_episodes,
    episodes_needed: decision.episodes_needed,
    action_divergence: decision.action_divergence,
  }
}
