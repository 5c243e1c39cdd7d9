/**
 * The rollup's input as columns: one typed array per metric side, over the
 * `done` rows that carry a metric blob, with NaN for an absent value. The
 * server and a dry run both build these with `columnsFromRows` and hand them
 * to the same `rollupColumns`; the statistics then run over typed arrays
 * with no per-row objects. Finalize reads only the fields it needs, as text
 * (`metricFieldsSql`), and lays them out with `columnsFromFields`, through
 * the same value rules.
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

const labelCode = (label: unknown) => (label === 'reported' ? SOURCE.reported : label === 'recorded' ? SOURCE.recorded : SOURCE.unknown)

function sourceCode(sources: unknown, column: MetricColumn): number {
  if (sources === null || typeof sources !== 'object') return SOURCE.unknown
  return labelCode((sources as Record<string, unknown>)[column])
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

/**
 * One result row as finalize reads it (`metricFieldsSql`): the status and,
 * for a row with a metric blob, the fields the rollup needs as one string.
 */
export interface FieldRow {
  status: ResultStatus
  /** `FIELDS`' `->>` texts joined by commas (an absent or null field is empty); null without a blob. */
  fields: string | null
}

/** The blob fields finalize reads (`r` is the `eval_results` row), in order: per metric column its two sides and its `outcome_source` label, then the action L2 means. */
const FIELDS = [
  ...METRIC_COLUMNS.flatMap((c) => [`r.metrics->>'${c}_baseline'`, `r.metrics->>'${c}_candidate'`, `r.metrics->'outcome_source'->>'${c}'`]),
  `r.metrics->>'action_l2_mean'`,
  `r.metrics->>'action_l2_normalized_mean'`,
]

/**
 * The select-list entry finalize reads instead of whole metric blobs: the
 * `FIELDS` of an object blob, joined by commas, as `fields`. PostgreSQL
 * extracts a dozen fields for less than it costs to send each blob whole,
 * and one short string a row is far cheaper for postgres.js to hand over
 * and for us to split than a parsed object or a column per field. Upload
 * validated every blob (success a boolean, the others finite numbers, the
 * labels from a picklist), so no field's text holds a comma.
 */
export const metricFieldsSql: string = `case when jsonb_typeof(r.metrics) = 'object' then concat_ws(',', ${
  FIELDS.map((f) => `coalesce(${f}, '')`).join(', ')
}) end as fields`

/** `->>` text -> the value `JSON.parse` gave for the stored scalar (booleans, numbers; anything else undefined). */
function scalar(text: string | undefined): unknown {
  if (text === 'true') return true
  if (text === 'false') return false
  const c = text === undefined ? NaN : text.charCodeAt(0)
  // A JSON number's text starts with '-' or a digit; `->>` prints it as stored.
  return c === 45 || (c >= 48 && c <= 57) ? Number(text) : undefined
}

/**
 * `columnsFromRows` for rows read with `metricFieldsSql`: the same counts and
 * the same values, through the same `episodeValue`. A row whose string does
 * not split into every field (a comma inside a value, which validation rules
 * out) reads as a blob without those values.
 */
export function columnsFromFields(rows: ReadonlyArray<FieldRow>): RollupColumns {
  const episodes: EpisodeCounts = { total: rows.length, done: 0, failed: 0, skipped: 0, pending: 0 }
  let length = 0
  for (const row of rows) {
    if (STATUSES.has(row.status)) episodes[row.status] += 1
    if (row.status === 'done' && row.fields !== null) length++
  }
  const metrics = {} as Record<MetricColumn, SideColumns>
  for (const c of METRIC_COLUMNS) metrics[c] = { baseline: new Float64Array(length), candidate: new Float64Array(length), source: new Uint8Array(length) }
  const sides = METRIC_COLUMNS.map((c) => metrics[c])
  const l2 = new Float64Array(length)
  const l2Normalized = new Float64Array(length)
  let i = 0
  for (const row of rows) {
    if (row.status !== 'done' || row.fields === null) continue
    let parts = row.fields.split(',')
    if (parts.length !== FIELDS.length) parts = []
    for (let m = 0; m < sides.length; m++) {
      const side = sides[m]!
      side.baseline[i] = episodeValue(METRIC_COLUMNS[m]!, scalar(parts[3 * m]))
      side.candidate[i] = episodeValue(METRIC_COLUMNS[m]!, scalar(parts[3 * m + 1]))
      side.source[i] = labelCode(parts[3 * m + 2])
    }
    l2[i] = finiteOrNaN(scalar(parts[3 * sides.length]))
    l2Normalized[i] = finiteOrNaN(scalar(parts[3 * sides.length + 1]))
    i++
  }
  return { episodes, length, metrics, l2, l2Normalized }
}
