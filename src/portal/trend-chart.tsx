/** @jsxImportSource hono/jsx */
/**
 * One rollup metric across eval runs, drawn on the server as SVG: x is the
 * run in time order, y the metric's delta (candidate - baseline) with its 95%
 * interval (`ci_low`..`ci_high`, when the summary has them) as a whisker, and
 * a dashed zero line. Every point is a link to its run; hovering shows the
 * numbers (SVG `<title>`).
 */
import type { MetricSpec } from '../eval/rollup.ts'
import { type ChartFrame, chartScale, ticks } from './chart-scale.ts'
import { formatDelta, formatMetric, formatTick, formatTime } from './format.ts'
import { isShareMetric } from '../eval/numbers.ts'

/** One run's value of one metric. */
export interface TrendPoint {
  href: string
  /** Short text under the point (the candidate version). */
  label: string
  name: string
  created_at: string
  delta: number | null
  ci_low: number | null
  ci_high: number | null
  baseline: number | null
  candidate: number | null
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/** A metric's trend point from a run's stored summary (absent values stay null). */
export function trendPoint(
  run: { name: string; created_at: string; candidate_policy_version: string; summary: Record<string, unknown> | null },
  spec: MetricSpec,
  href: string,
): TrendPoint {
  const m = (run.summary?.[spec.name] ?? {}) as Record<string, unknown>
  return {
    href,
    label: run.candidate_policy_version,
    name: run.name,
    created_at: run.created_at,
    delta: num(m.delta),
    ci_low: num(m.ci_low),
    ci_high: num(m.ci_high),
    baseline: num(m.baseline),
    candidate: num(m.candidate),
  }
}

// The left pad holds "+100 pp" at the tick size phones get (see style.ts).
const FRAME: ChartFrame = { width: 720, height: 230, pad: { left: 100, right: 16, top: 12, bottom: 40 } }

/** What a point says, in words: the tooltip and the link's accessible name. */
function describePoint(spec: MetricSpec, p: TrendPoint): string {
  const interval = p.ci_low !== null && p.ci_high !== null
    ? `, 95% interval [${formatDelta(spec.name, p.ci_low)}, ${formatDelta(spec.name, p.ci_high)}]`
    : ', no interval'
  return `${p.name} (${formatTime(p.created_at)}): ${formatMetric(spec.name, p.baseline)} → ${formatMetric(spec.name, p.candidate)}, delta ${
    formatDelta(spec.name, p.delta)
  }${interval}`
}

export function TrendChart(props: { spec: MetricSpec; points: TrendPoint[] }) {
  const { spec, points } = props
  // Zero is always in range: the dashed line says where "no change" is.
  const values = [0, ...points.flatMap((p) => [p.delta, p.ci_low, p.ci_high]).filter((v): v is number => v !== null)]
  const { lo, hi, plotH, band, x, y } = chartScale(FRAME, values, points.length)
  const { width: W, height: H, pad: PAD } = FRAME
  const labelEvery = Math.ceil(points.length / 8)
  const line = points.flatMap((p, i) => (p.delta === null ? [] : [`${x(i)},${y(p.delta)}`])).join(' ')
  const better = (d: number) => (d === 0 ? 'flat' : (d > 0) === (spec.direction === 'higher') ? 'up' : 'down')
  const cap = Math.min(6, band * 0.25)
  return (
    <svg
      class='chart trend-chart'
      viewBox={`0 0 ${W} ${H}`}
      role='group'
      aria-label={`${spec.label}: delta with 95% interval per eval run`}
      xmlns='http://www.w3.org/2000/svg'
      data-metric={spec.name}
    >
      {ticks(lo, hi).map((t) => (
        <g>
          <line class='grid' x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
          <text x={PAD.left - 8} y={y(t)} dy='0.35em' text-anchor='end'>{isShareMetric(spec.name) ? formatDelta(spec.name, t) : formatTick(t, true)}</text>
        </g>
      ))}
      <line class='zero' x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} />
      <line class='axis' x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={PAD.top + plotH} />
      {line.includes(' ') && <polyline class='trendline' points={line} />}
      {points.map((p, i) => (
        <g class='point' data-delta={p.delta === null ? '' : String(p.delta)}>
          <a href={p.href} aria-label={describePoint(spec, p)}>
            <title>{describePoint(spec, p)}</title>
            {p.ci_low !== null && p.ci_high !== null && (
              <g class='ci'>
                <line x1={x(i)} x2={x(i)} y1={y(p.ci_low)} y2={y(p.ci_high)} />
                <line x1={x(i) - cap} x2={x(i) + cap} y1={y(p.ci_low)} y2={y(p.ci_low)} />
                <line x1={x(i) - cap} x2={x(i) + cap} y1={y(p.ci_high)} y2={y(p.ci_high)} />
              </g>
            )}
            {/* A wide transparent target so a point is easy to click. */}
            <rect x={x(i) - band / 2} y={PAD.top} width={band} height={plotH} fill='transparent' />
            {p.delta !== null
              ? <circle class={`candidate ${better(p.delta)}`} cx={x(i)} cy={y(p.delta)} r={4.5} />
              : <text x={x(i)} y={y(0)} dy='0.35em' text-anchor='middle'>?</text>}
            {/* Shown while the point has focus (style.ts): its delta, for the keyboard as for the mouse's tooltip. */}
            <text class='value' x={x(i)} y={p.delta === null ? y(0) : y(p.delta)} dy='-0.9em' text-anchor='middle'>{formatDelta(spec.name, p.delta)}</text>
          </a>
          {i % labelEvery === 0 && (
            <text x={x(i)} y={H - PAD.bottom + 18} text-anchor='middle'>{p.label.length > 14 ? `${p.label.slice(0, 13)}…` : p.label}</text>
          )}
        </g>
      ))}
    </svg>
  )
}
