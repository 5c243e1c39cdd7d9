/**
 * Arrays of an episode artifact as plottable columns: an `[steps, ...]` array
 * becomes one column per component (`[0]`, `[1]`, ... or `[i,j]` for deeper
 * shapes), each a `Float64Array` over the steps. Runs in the browser (the
 * plots bundle) and in unit tests; no DOM here.
 */
import type { NdArray } from '../../replay/npz/types.ts'

/** One plotted line: a component of one key of one source. */
export interface Column {
  /** Legend text, e.g. `[2]` or `baseline [2]`. */
  label: string
  /** Which source it came from (index into the plot set's sources). */
  source: number
  /** The component's values over the steps (NaN where not finite). */
  values: Float64Array
}

/** All columns of one key, and what it held. */
export interface KeyColumns {
  key: string
  /** Steps of the longest source. */
  steps: number
  /** Components per step (the product of the shape after the step axis). */
  components: number
  columns: Column[]
  /** Set (the per-step shape) for a key with more than `MAX_PLOT_COMPONENTS` per step: not made into columns. */
  omitted?: number[]
}

/**
 * Components per step above which a key is not plotted: a camera image
 * (96 x 96 x 3 is 27,648 lines) makes an unreadable chart and takes the
 * browser minutes and gigabytes to draw.
 */
export const MAX_PLOT_COMPONENTS = 64

/** Component labels of a per-step shape: `[]` -> `['value']`, `[3]` -> `['[0]', '[1]', '[2]']`, `[2,2]` -> `['[0,0]', ...]`. */
export function componentLabels(rest: readonly number[]): string[] {
  if (rest.length === 0) return ['value']
  const labels: string[] = []
  const index = rest.map(() => 0)
  const total = rest.reduce((a, b) => a * b, 1)
  for (let n = 0; n < total; n++) {
    labels.push(`[${index.join(',')}]`)
    for (let d = rest.length - 1; d >= 0; d--) {
      if (++index[d]! < rest[d]!) break
      index[d] = 0
    }
  }
  return labels
}

/** The columns of one array (a 0-d array has no steps and gives none). */
export function arrayColumns(array: NdArray, source = 0, prefix = ''): { steps: number; components: number; columns: Column[] } {
  if (array.shape.length === 0) return { steps: 0, components: 0, columns: [] }
  const steps = array.shape[0]!
  const labels = componentLabels(array.shape.slice(1))
  const m = labels.length
  const data = array.data
  const big = typeof data[0] === 'bigint'
  const columns = labels.map((label) => ({ label: prefix + label, source, values: new Float64Array(steps) }))
  for (let i = 0; i < steps; i++) {
    const row = i * m
    for (let j = 0; j < m; j++) columns[j]!.values[i] = big ? Number(data[row + j] as bigint) : (data[row + j] as number)
  }
  return { steps, components: m, columns }
}

/**
 * The keys of one or more sources (baseline and candidate, say), in the order
 * they first appear, each with the columns of every source that has it; a
 * key's component columns are interleaved per source (`baseline [0]`,
 * `candidate [0]`, `baseline [1]`, ...) so the pair sits together in the legend.
 */
export function keyColumns(sources: ReadonlyArray<{ label?: string; arrays: Record<string, NdArray> }>): KeyColumns[] {
  const keys: string[] = []
  for (const s of sources) for (const key of Object.keys(s.arrays)) if (!keys.includes(key)) keys.push(key)
  const out: KeyColumns[] = []
  for (const key of keys) {
    const shapes = sources.flatMap((s) => (s.arrays[key] && s.arrays[key]!.shape.length > 0 ? [s.arrays[key]!.shape] : []))
    const widest = shapes.reduce((best, shape) => (perStep(shape) > perStep(best) ? shape : best), shapes[0] ?? [])
    if (perStep(widest) > MAX_PLOT_COMPONENTS) {
      out.push({ key, steps: Math.max(...shapes.map((shape) => shape[0]!)), components: perStep(widest), columns: [], omitted: widest.slice(1) })
      continue
    }
    const per = sources.map((s, i) => (s.arrays[key] ? arrayColumns(s.arrays[key]!, i, s.label ? `${s.label} ` : '') : null))
    const present = per.filter((p) => p !== null && p.steps > 0) as Array<ReturnType<typeof arrayColumns>>
    if (present.length === 0) continue
    const components = Math.max(...present.map((p) => p.components))
    const columns: Column[] = []
    for (let j = 0; j < components; j++) for (const p of per) if (p && p.columns[j]) columns.push(p.columns[j]!)
    out.push({ key, steps: Math.max(...present.map((p) => p.steps)), components, columns })
  }
  return out
}

/** Components per step of an array of `shape` (0 for a 0-d array, which has no steps). */
function perStep(shape: readonly number[]): number {
  return shape.length === 0 ? 0 : shape.slice(1).reduce((a, b) => a * b, 1)
}
