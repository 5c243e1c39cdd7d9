/**
 * How the verdict's reasons and the CLI write numbers: three significant
 * digits, never fewer than needed to show the sign, so a delta of -0.0004
 * reads `-0.0004`, not `0`. Shares print as percentages, their deltas as
 * percentage points.
 */
import type { MetricName } from './rollup.ts'

/** Metrics that are shares of episodes (or of steps). */
export function isShareMetric(name: MetricName): boolean {
  return name === 'success_rate' || name === 'collision_rate' || name === 'ood_action_share'
}

/**
 * A number at three significant digits (all integer digits kept from 1000
 * up); `signed` adds `+` to positives.
 *
 * @example
 * significant(-0.000412) // '-0.000412'
 * significant(2.345, true) // '+2.35'
 */
export function significant(x: number, signed = false): string {
  if (!Number.isFinite(x)) return String(x)
  const text = Math.abs(x) >= 1000 ? String(Math.round(x)) : String(Number(x.toPrecision(3)))
  return signed && x > 0 ? `+${text}` : text
}

/** A metric's value: `62.5%` for shares, `12.3` otherwise; `-` when absent. */
export function formatValue(name: MetricName, x: number | null): string {
  if (x === null) return '-'
  return isShareMetric(name) ? `${significant(x * 100)}%` : significant(x)
}

/** A metric's delta (or an interval end) with its sign: `+12.5 pp` for shares, `-0.0004` otherwise. */
export function formatDelta(name: MetricName, x: number | null): string {
  if (x === null) return '-'
  return isShareMetric(name) ? `${significant(x * 100, true)} pp` : significant(x, true)
}
