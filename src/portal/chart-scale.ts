/**
 * The scale both server-drawn charts share (the eval-run chart and the trends
 * chart): a y range around the values, padded by 8% and widened when they are
 * all equal; one column per point; round tick values; coordinates rounded to
 * hundredths so the SVG stays small.
 */

/** The SVG's size and the margins around its plot area. */
export interface ChartFrame {
  width: number
  height: number
  pad: { left: number; right: number; top: number; bottom: number }
}

/** Pixel mappings of a chart: `y(value)`, `x(column)`, and the plot area's size. */
export interface ChartScale {
  /** The y axis' range after padding. */
  lo: number
  hi: number
  plotW: number
  plotH: number
  /** Width of one column. */
  band: number
  x(column: number): number
  y(value: number): number
}

/** Coordinates to hundredths of a pixel. */
export const round = (n: number) => Math.round(n * 100) / 100

/** The scale of `columns` columns whose values are `values` (none: the range is -1..1). */
export function chartScale(frame: ChartFrame, values: readonly number[], columns: number): ChartScale {
  let lo = values.length ? Math.min(...values) : 0
  let hi = values.length ? Math.max(...values) : 0
  if (lo === hi) {
    lo -= lo === 0 ? 1 : Math.abs(lo) * 0.5
    hi += hi === 0 ? 1 : Math.abs(hi) * 0.5
  }
  const pad = (hi - lo) * 0.08
  lo -= pad
  hi += pad
  const { left, right, top, bottom } = frame.pad
  const plotW = frame.width - left - right
  const plotH = frame.height - top - bottom
  const band = plotW / Math.max(1, columns)
  return {
    lo,
    hi,
    plotW,
    plotH,
    band,
    x: (column) => round(left + band * (column + 0.5)),
    y: (value) => round(top + plotH - ((value - lo) / (hi - lo)) * plotH),
  }
}

/** Round tick values covering [min, max]. */
export function ticks(min: number, max: number, count = 5): number[] {
  const span = max - min
  const rough = span / Math.max(1, count - 1)
  const magnitude = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? rough
  const out: number[] = []
  // Each tick from its index, not by adding steps: a sum drifts, and the zero line read -5.55e-15.
  for (let k = Math.ceil(min / step); k * step <= max + step * 1e-9; k++) out.push(Number((k * step).toPrecision(12)) || 0)
  return out
}
