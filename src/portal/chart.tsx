/** @jsxImportSource hono/jsx */
/**
 * The eval-run page's chart: per-episode baseline vs candidate values of one
 * metric-blob column, drawn on the server as SVG (no script, no CDN). Each
 * baseline episode is a column with a grey baseline dot, a blue candidate
 * square and a line between them, green when the candidate is better for
 * that metric, red when worse. When the two are equal the baseline dot is
 * drawn over a hollow candidate square, so both stay visible. A failed
 * episode gets a red cross on the axis in its column. Hovering a column
 * shows its values (SVG `<title>`).
 */
import type { MetricSpec } from '../eval/rollup.ts'
import { type ChartFrame, chartScale, round, ticks } from './chart-scale.ts'
import { formatNumber, formatTick, NONE } from './format.ts'

/** One baseline episode's pair of values (either may be absent). */
export interface ChartPoint {
  /** Row number in the results table (1-based), shown under the column. */
  row: number
  label: string
  baseline: number | null
  candidate: number | null
  /** The episode failed (no values; marked on the axis). */
  failed?: boolean
}

/** A metric-blob value as a number: booleans count 1/0, anything else non-numeric is absent. */
export function chartValue(raw: unknown): number | null {
  if (raw === true) return 1
  if (raw === false) return 0
  return typeof raw === 'number' && Number.isFinite(raw) ? raw : null
}

/**
 * The points of `column` over result rows: failed rows as failed points,
 * other rows without a blob or without either value left out.
 */
export function chartPoints(
  rows: ReadonlyArray<{ label: string; metrics: Record<string, unknown> | null; status?: string }>,
  column: MetricSpec['column'],
): ChartPoint[] {
  const points: ChartPoint[] = []
  rows.forEach((row, i) => {
    if (row.status === 'failed') {
      points.push({ row: i + 1, label: row.label, baseline: null, candidate: null, failed: true })
      return
    }
    if (!row.metrics) return
    const baseline = chartValue(row.metrics[`${column}_baseline`])
    const candidate = chartValue(row.metrics[`${column}_candidate`])
    if (baseline !== null || candidate !== null) points.push({ row: i + 1, label: row.label, baseline, candidate })
  })
  return points
}

const FRAME: ChartFrame = { width: 720, height: 260, pad: { left: 64, right: 16, top: 12, bottom: 34 } }

/**
 * The chart with its caption and legend (HTML, so they stay readable when the
 * SVG shrinks to a phone's width); `spec` says which direction is better.
 */
export function ResultChart(props: { points: ChartPoint[]; spec: MetricSpec; column: string }) {
  return (
    <figure class='chart-figure'>
      <figcaption>
        {`${props.column} per baseline episode (${props.spec.direction} is better) `}
        <span class='legend'>
          <span class='swatch baseline' /> baseline <span class='swatch candidate' /> candidate <span class='swatch up' /> better <span class='swatch down' />
          {' '}
          worse <span class='failed-glyph' aria-hidden='true'>×</span> failed
        </span>
      </figcaption>
      <ChartSvg {...props} />
      <ChartTable {...props} />
    </figure>
  )
}

/** The chart's values as a table (for the keyboard, screen readers and copying), folded under it. */
function ChartTable(props: { points: ChartPoint[]; spec: MetricSpec; column: string }) {
  const change = (p: ChartPoint) => {
    if (p.failed) return 'failed'
    if (p.baseline === null || p.candidate === null) return NONE
    if (p.baseline === p.candidate) return 'same'
    return (p.candidate > p.baseline) === (props.spec.direction === 'higher') ? 'better' : 'worse'
  }
  return (
    <details class='chart-table'>
      <summary>Values as a table</summary>
      <div class='scroll'>
        <table>
          <thead>
            <tr>
              <th class='num'>#</th>
              <th>episode</th>
              <th class='num'>baseline</th>
              <th class='num'>candidate</th>
              <th>change</th>
            </tr>
          </thead>
          <tbody>
            {props.points.map((p) => (
              <tr>
                <td class='num'>{String(p.row)}</td>
                <td>{p.label}</td>
                <td class='num'>{formatNumber(p.baseline)}</td>
                <td class='num'>{formatNumber(p.candidate)}</td>
                <td>{change(p)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  )
}

/** The SVG itself: x is the results row, y the value. */
function ChartSvg(props: { points: ChartPoint[]; spec: MetricSpec; column: string }) {
  const { points, spec } = props
  const values = points.flatMap((p) => [p.baseline, p.candidate]).filter((v): v is number => v !== null)
  const { lo, hi, plotH, band, x, y } = chartScale(FRAME, values, points.length)
  const { width: W, height: H, pad: PAD } = FRAME
  const r = round(Math.max(1.5, Math.min(5, band * 0.28)))
  const labelEvery = Math.ceil(points.length / 12)
  const direction = (p: ChartPoint) => {
    if (p.baseline === null || p.candidate === null || p.baseline === p.candidate) return 'flat'
    return (p.candidate > p.baseline) === (spec.direction === 'higher') ? 'up' : 'down'
  }
  return (
    <svg
      class='chart'
      viewBox={`0 0 ${W} ${H}`}
      role='img'
      aria-label={`${props.column}: baseline vs candidate per episode`}
      xmlns='http://www.w3.org/2000/svg'
    >
      {ticks(lo, hi).map((t) => (
        <g>
          <line class='grid' x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
          <text x={PAD.left - 8} y={y(t)} dy='0.35em' text-anchor='end'>{formatTick(t)}</text>
        </g>
      ))}
      <line class='axis' x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={PAD.top + plotH} />
      <line class='axis' x1={PAD.left} x2={W - PAD.right} y1={PAD.top + plotH} y2={PAD.top + plotH} />
      {points.map((p, i) => {
        const same = p.baseline !== null && p.baseline === p.candidate
        const base = PAD.top + plotH
        return (
          <g class={p.failed ? 'episode failed' : 'episode'}>
            <title>
              {p.failed
                ? `#${p.row} ${p.label}: failed (no values)`
                : `#${p.row} ${p.label}: baseline ${formatNumber(p.baseline)}, candidate ${formatNumber(p.candidate)}${same ? ' (unchanged)' : ''}`}
            </title>
            {p.failed && (
              <path
                class='failed-mark'
                stroke-width={Math.max(1.5, r / 2)}
                d={`M${x(i) - r} ${base - 2 * r - 2}L${x(i) + r} ${base - 2}M${x(i) + r} ${base - 2 * r - 2}L${x(i) - r} ${base - 2}`}
              />
            )}
            {p.baseline !== null && p.candidate !== null && !same && (
              <line class={direction(p)} stroke-width={Math.max(1, r / 2)} x1={x(i)} x2={x(i)} y1={y(p.baseline)} y2={y(p.candidate)} />
            )}
            {p.candidate !== null && (
              <rect
                class={same ? 'candidate hollow' : 'candidate'}
                stroke-width={round(Math.max(1, r / 3))}
                x={x(i) - r}
                y={y(p.candidate) - r}
                width={2 * r}
                height={2 * r}
              />
            )}
            {p.baseline !== null && <circle class='baseline' cx={x(i)} cy={y(p.baseline)} r={same ? round(r * 0.6) : r} />}
            {i % labelEvery === 0 && <text x={x(i)} y={H - PAD.bottom + 22} text-anchor='middle'>{String(p.row)}</text>}
          </g>
        )
      })}
    </svg>
  )
}
