/**
 * Plain-text formatting for the portal pages: numbers, rates, deltas, sizes
 * and timestamps. Pure functions; the components escape whatever they print.
 */
import type { MetricName, MetricSummary } from '../eval/rollup.ts'
import { jsonText } from '../http/json.ts'
import { textProblem } from '../http/text.ts'
import { isShareMetric } from '../eval/numbers.ts'

/** Shown wherever a value is absent. */
export const NONE = '—'

/** A number at a readable precision (integers as they are). */
export function formatNumber(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return NONE
  if (Number.isInteger(n)) return String(n)
  const abs = Math.abs(n)
  if (abs >= 1e6 || abs < 1e-3) return n.toExponential(2)
  if (abs >= 100) return n.toFixed(1)
  return String(Number(n.toFixed(3)))
}

const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 })

/**
 * An axis tick: short enough for a chart's margin at any size (`-100M`,
 * `50K`, `0.25`), with its sign when `signed`.
 *
 * @example
 * formatTick(-100000000) // '-100M'
 */
export function formatTick(n: number, signed = false): string {
  const abs = Math.abs(n)
  const text = abs >= 1e15 ? n.toExponential(1) : abs >= 10_000 ? COMPACT.format(n) : formatNumber(n)
  return signed && n > 0 ? `+${text}` : text
}

/** One side of a rollup metric: `75%` for shares, the number otherwise. */
export function formatMetric(name: MetricName, n: number | null): string {
  if (n === null) return NONE
  return isShareMetric(name) ? `${formatNumber(n * 100)}%` : formatNumber(n)
}

/** A delta with its sign: `+2`, `-0.5`, `+25 pp` for shares. */
export function formatDelta(name: MetricName, delta: number | null): string {
  if (delta === null) return NONE
  const text = isShareMetric(name) ? `${formatNumber(Math.abs(delta) * 100)} pp` : formatNumber(Math.abs(delta))
  return delta > 0 ? `+${text}` : delta < 0 ? `-${text}` : isShareMetric(name) ? '0 pp' : '0'
}

/** The better/worse mark of a metric row: its class and its words. */
export function verdict(m: MetricSummary): { className: string; text: string } {
  if (m.delta_is_better === null) return { className: 'na', text: 'n/a' }
  if (m.delta_is_better) return { className: 'better', text: '✓ better' }
  if (m.delta === 0) return { className: 'same', text: '= unchanged' }
  return { className: 'worse', text: '✗ worse' }
}

/** `2026-05-01 12:34:56 UTC` from an ISO timestamp. */
export function formatTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/Z$/, ' UTC')
}

/** `1.2 MB` (decimal units, as storage consoles show). */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return NONE
  if (bytes < 1000) return `${bytes} B`
  const units = ['kB', 'MB', 'GB', 'TB', 'PB']
  let value = bytes
  let unit = -1
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`
}

/** `42.5 s` or `1 h 02 min` for long runs. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return NONE
  if (seconds < 60) return `${formatNumber(seconds)} s`
  const m = Math.floor(seconds / 60)
  if (m < 60) return `${m} min ${String(Math.floor(seconds % 60)).padStart(2, '0')} s`
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`
}

/** Metadata as the stored JSON, indented (the components print it escaped). */
export function prettyJson(value: unknown): string {
  return jsonText(value ?? {}, 2)
}

/**
 * Whether a refused filter form can be shown again with the values as typed:
 * not when one holds a NUL or an unpaired surrogate (the error page says
 * which instead of echoing it).
 */
export function echoable(values: Record<string, string | undefined>): boolean {
  return Object.values(values).every((value) => value === undefined || textProblem(value) === undefined)
}

/** The form's words for the list parameters an error message names. */
const FIELD_LABELS: Record<string, string> = {
  created_after: 'created from',
  created_before: 'created before',
  policy_version: 'policy version',
  baseline_policy_version: 'baseline version',
  candidate_policy_version: 'candidate version',
}

/**
 * A list's validation error as the filter form reads: its field under the
 * label the form shows (`created_after: ...` becomes `created from: ...`).
 *
 * @example
 * filterError('created_after: must be a date') // 'created from: must be a date'
 */
export function filterError(message: string): string {
  const field = /^([a-z_]+):/.exec(message)?.[1]
  return field && FIELD_LABELS[field] ? `${FIELD_LABELS[field]}${message.slice(field.length)}` : message
}
