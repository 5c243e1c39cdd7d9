/**
 * The rollup's input as columns: one typed array per metric side, over the
 * `done` rows that carry a metric blob, with NaN for an absent value. The
 * server and a dry run both build these with `columnsFromRows` and hand them
 * to the same `rollupColumns`; the statistics then run over typed arrays
 * with no per-row objects.
 */
import type { MetricBlob } from './metric-blob.ts'

/** Status of one eval result row (contract, "Eval-run endpoints"). */
export type ResultStatus = 'pending' | 'done' | 'failed' | 'skipped'

/** The part of an eval result row the rollup reads. */
export interface RollupRow {
  /** The row's status; only `done` rows with metrics count. */
  status: ResultStatus
  /** The uploaded metric blob, or `null`. */
  metrics: MetricBlob | null
}

/** How many result rows the rollup saw, per status (an extra, informative key). */
export interface EpisodeCounts {
  /** All result rows (one per baseline episode). */
  total: number
  /** Rows uploaded as `done`. */
  done: number
  /** Rows uploaded as `failed`. */
  failed: number
  /** Rows still pending at finalize. */
  skipped: number
  /** Rows not uploaded yet (0 once finalized). */
  pending: number
}

/** Metric-blob column stems the rollup compares (`<stem>_baseline` / `<stem>_candidate`). */
export type MetricColumn = 'success' | 'reward_total' | 'collision_count' | 'time_to_goal_s' | 'ood_action_share'

export const METRIC_COLUMNS: ReadonlyArray<MetricColumn> = ['success', 'reward_total', 'collision_count', 'time_to_goal_s', 'ood_action_share']

/** `outcome_source` codes: 0 unknown (not labelled), 1 reported by the policy, 2 recorded (copied from the baseline). */
export const SOURCE = { unknown: 0, reported: 1, recorded: 2 } as const

export interface SideColumns {
  baseline: Float64Array
  candidate: Float64Array
  /** Where each candidate value came from (`SOURCE` codes). */
  source: Uint8Array
}

export interface RollupColumns {
  episodes: EpisodeCounts
  /** Done rows with a metric blob: the length of every array below. */
  length: number
  metrics: Record<MetricColumn, SideColumns>
  l2: Float64Array
  l2Normalized: Float64Array
}

const STATUSES = new Set<string>(['pending', 'done', 'failed', 'skipped'])

/**
 * One episode's value for a column, or NaN when absent or of the wrong type.
 * Success counts as 1/0 and a collision count as "had any" 1/0, so every
 * metric is then a plain mean. Types are rechecked because stored blobs are
 * read back from the database, not from the validator.
 */
export function episodeValue(column: MetricColumn, raw: unknown): number {
  if (column === 'success') return raw === true ? 1 : raw === false ? 0 : NaN
  if (typeof raw !== 'number' || !Number.isFinite(raw)) return NaN
  if (column === 'collision_count') return raw > 0 ? 1 : 0
  return raw
}

const finiteOrNaN = (raw: unknown) => (typeof raw === 'number' && Number.isFinite(raw) ? raw : NaN)

function sourceCode(sources: unknown, column: MetricColumn): number {
  if (sources === null || typeof sources !== 'object') return SOURCE.unknown
  const label = (sources as Record<string, unknown>)[column]
  return label === 'reported' ? SOURCE.reported : label === 'recorded' ? SOURCE.recorded : SOURCE.unknown
}

/** Counts rows per status and lays the done rows' blobs out as columns. */
export function columnsFromRows(rows: ReadonlyArray<RollupRow>): RollupColumns {
  const episodes: EpisodeCounts = { total: rows.length, done: 0, failed: 0, skipped: 0, pending: 0 }
  let length = 0
  for (const row of rows) {
    if (STATUSES.has(row.status)) episodes[row.status] += 1
    if (row.status === 'done' && row.metrics) length++
  }
  const metrics = {} as Record<MetricColumn, SideColumns>
  for (const c of METRIC_COLUMNS) metrics[c] = { baseline: new Float64Array(length), candidate: new Float64Array(length), source: new Uint8Array(length) }
  const l2 = new Float64Array(length)
  const l2Normalized = new Float64Array(length)
  let i = 0
  for (const row of rows) {
    const m = row.metrics
    if (row.status !== 'done' || !m) continue
    for (const c of METRIC_COLUMNS) {
      const side = metrics[c]
      side.baseline[i] = episodeValue(c, m[`${c}_baseline`])
      side.candidate[i] = episodeValue(c, m[`${c}_candidate`])
      side.source[i] = sourceCode(m.outcome_source, c)
    }
    l2[i] = finiteOrNaN(m.action_l2_mean)
    l2Normalized[i] = finiteOrNaN(m.action_l2_normalized_mean)
    i++
  }
  return { episodes, length, metrics, l2, l2Normalized }
}
