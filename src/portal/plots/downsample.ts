/**
 * Min/max downsampling per pixel: a line of 100,000 steps drawn into 800
 * pixels needs, per pixel, only the lowest and highest value in it (in the
 * order they occur), and looks the same as the full line. Every column of a
 * plot shares one x axis (uPlot's aligned data), so each bucket gives two x
 * positions (its first and last step) and each column its first-occurring
 * extreme at the first and the other at the second.
 */

/** Aligned data for uPlot: the x values, then one array per column (null is a gap). */
export type Aligned = [number[], ...Array<Array<number | null>>]

/**
 * The steps `[from, to)` of `columns` as at most `2 * buckets` points per
 * column; fewer steps than that are returned whole. `time(i)` is the x value
 * of step `i` (seconds from `fps`, or the step index). Values past a column's
 * end and non-finite values are gaps (null).
 *
 * @example
 * downsample([Float64Array.from([0, 5, 1, 9])], (i) => i / 10, 0, 4, 1)
 * // [[0, 0.3], [0, 9]]: bucket 0..3, first its min 0 (step 0), then its max 9 (step 3)
 */
export function downsample(columns: readonly Float64Array[], time: (i: number) => number, from: number, to: number, buckets: number): Aligned {
  const n = Math.max(0, to - from)
  if (n <= 2 * buckets) {
    const x: number[] = new Array(n)
    for (let i = 0; i < n; i++) x[i] = time(from + i)
    return [
      x,
      ...columns.map((c) => {
        const y: Array<number | null> = new Array(n)
        for (let i = 0; i < n; i++) {
          const v = from + i < c.length ? c[from + i]! : NaN
          y[i] = Number.isFinite(v) ? v : null
        }
        return y
      }),
    ]
  }
  const x: number[] = []
  const ys: Array<Array<number | null>> = columns.map(() => [])
  const size = n / buckets
  for (let b = 0; b < buckets; b++) {
    const lo = from + Math.floor(b * size)
    const hi = from + Math.floor((b + 1) * size) // exclusive
    x.push(time(lo), time(hi - 1))
    for (let k = 0; k < columns.length; k++) {
      const c = columns[k]!
      const end = Math.min(hi, c.length)
      let min = Infinity
      let max = -Infinity
      let minAt = -1
      let maxAt = -1
      for (let i = lo; i < end; i++) {
        const v = c[i]!
        if (v < min) (min = v), (minAt = i)
        if (v > max) (max = v), (maxAt = i)
      }
      const y = ys[k]!
      if (minAt < 0) y.push(null, null)
      else if (minAt <= maxAt) y.push(min, max)
      else y.push(max, min)
    }
  }
  return [x, ...ys]
}

/** The step range `[from, to)` whose x values fall in `[min, max]`, one step of margin each side. */
export function visibleSteps(steps: number, time: (i: number) => number, min: number, max: number): [number, number] {
  const t0 = time(0)
  const dt = steps > 1 ? time(1) - t0 : 1
  const from = Math.max(0, Math.floor((min - t0) / dt) - 1)
  const to = Math.min(steps, Math.ceil((max - t0) / dt) + 2)
  return [from, Math.max(from, to)]
}
