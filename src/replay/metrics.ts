import { EpisodicError } from '../errors.ts'
import { sizeOf, type NdArray, type TypedArray } from './npz/index.ts'

/**
 * Per-episode action metrics, exactly as the contract's "Metric blob" defines
 * them. A key counts when it is in the baseline (with a step dimension) and
 * the candidate returned it; other keys are ignored, as the policy contract
 * says. `null` when no key is shared or the episode has zero steps.
 *
 * - `action_l2_mean`: mean over steps of sqrt(sum over shared keys and
 *   components of (candidate - baseline)^2).
 * - `ood_action_share_candidate`: share of steps where some candidate
 *   component lies outside the baseline's [min, max] for that component over
 *   the episode. NaN baseline values are left out of min/max; a NaN candidate
 *   component always counts as outside (and makes the L2 mean NaN).
 */
export interface ActionMetrics {
  steps: number
  action_l2_mean: number | null
  ood_action_share_candidate: number | null
}

/** One key's values for one step, as a policy returns them: a scalar, a flat array, or `{ shape, data }`. */
export type ActionValue = number | ArrayLike<number> | { shape: readonly number[]; data: ArrayLike<number> | TypedArray }

interface Slot {
  key: string
  stepShape: number[]
  width: number
  baseline: Float64Array
  candidate: Float64Array
  seen: Uint8Array
  count: number
}

/**
 * Collects a candidate policy's actions step by step into one preallocated
 * `Float64Array` per baseline key, then computes `ActionMetrics`. Keys the
 * baseline lacks (and `_outcome`) are ignored; a value whose shape differs
 * from the baseline's per-step shape throws, naming the key and both shapes.
 *
 * @example
 * const rec = new CandidateRecorder(baselineActions)
 * for (let i = 0; i < rec.steps; i++) rec.record(i, policy(observationAt(i)))
 * const { action_l2_mean, ood_action_share_candidate } = rec.metrics()
 */
export class CandidateRecorder {
  /** Steps in the episode: the leading dimension shared by the baseline's action arrays. */
  readonly steps: number
  readonly #slots: Slot[]

  constructor(baseline: Record<string, NdArray>) {
    this.steps = stepCount(baseline)
    this.#slots = Object.entries(baseline)
      .filter(([, a]) => a.shape.length > 0)
      .map(([key, a]) => {
        const width = sizeOf(a.shape.slice(1))
        const candidate = new Float64Array(a.data.length)
        return { key, stepShape: a.shape.slice(1), width, baseline: toFloat64(a.data), candidate, seen: new Uint8Array(this.steps), count: 0 }
      })
  }

  /** Stores the action the policy returned at `step` (0-based); each value is an `ActionValue`. */
  record(step: number, action: Readonly<Record<string, unknown>>): void {
    if (!(step >= 0 && step < this.steps)) throw new RangeError(`record: step ${step} outside [0, ${this.steps})`)
    const slots = this.#slots
    for (let s = 0; s < slots.length; s++) {
      const slot = slots[s]
      const value = action[slot.key]
      if (value === undefined) continue
      writeStep(slot, step, value)
      if (slot.seen[step] === 0) {
        slot.seen[step] = 1
        slot.count++
      }
    }
  }

  /** Metrics over the recorded steps. A key returned at some steps but not all throws. */
  metrics(): ActionMetrics {
    const shared = this.#slots.filter((slot) => slot.count > 0)
    for (const slot of shared) {
      if (slot.count !== this.steps) {
        throw new EpisodicError('invalid', `action key ${JSON.stringify(slot.key)} was returned at ${slot.count} of ${this.steps} steps; return a key at every step or never`)
      }
    }
    return computeMetrics(shared, this.steps)
  }
}

/**
 * The same metrics from whole-episode arrays (`candidate[key]` shaped like
 * `baseline[key]`, steps first), e.g. candidate actions loaded from an `.npz`.
 */
export function actionMetrics(baseline: Record<string, NdArray>, candidate: Record<string, NdArray>): ActionMetrics {
  const steps = stepCount(baseline)
  const shared: Pick<Slot, 'width' | 'baseline' | 'candidate'>[] = []
  for (const [key, b] of Object.entries(baseline)) {
    const c = Object.hasOwn(candidate, key) ? candidate[key] : undefined
    if (b.shape.length === 0 || c === undefined) continue
    if (!sameShape(c.shape, b.shape)) throw shapeError(key, c.shape, b.shape)
    shared.push({ width: sizeOf(b.shape.slice(1)), baseline: toFloat64(b.data), candidate: toFloat64(c.data) })
  }
  return computeMetrics(shared, steps)
}

/**
 * Column group by column group: a group's baseline ranges live in registers.
 * One strided pass over the group finds each component's range, the next adds
 * the group's squared differences into a per-step sum and marks out-of-range
 * steps. Groups are 4, then 2, then 1 components wide, so a step's sum is
 * touched once per group rather than once per component; squares are still
 * added one at a time in key order then component order, as the definition
 * reads (bit-identical to a plain loop). Measured ~13% faster than one column
 * at a time, itself ~20% faster than the naive loop; row-wise loops with
 * per-component range arrays were slower. `v < lo` is false for NaN, so NaN
 * baseline values never enter a range, and a NaN candidate fails `v >= lo`.
 */
function computeMetrics(pairs: Pick<Slot, 'width' | 'baseline' | 'candidate'>[], steps: number): ActionMetrics {
  if (pairs.length === 0 || steps === 0) return { steps, action_l2_mean: null, ood_action_share_candidate: null }
  const sq = new Float64Array(steps)
  const outside = new Uint8Array(steps)
  // An indexed loop: a for-of here deoptimized mid-run for want of type feedback (measured).
  for (let p = 0; p < pairs.length; p++) {
    const { width: w, baseline: b, candidate: c } = pairs[p]
    const n = steps * w
    let j = 0
    for (; j + 4 <= w; j += 4) {
      let lo0 = Infinity, hi0 = -Infinity, lo1 = Infinity, hi1 = -Infinity
      let lo2 = Infinity, hi2 = -Infinity, lo3 = Infinity, hi3 = -Infinity
      for (let o = j; o < n; o += w) {
        const v0 = b[o], v1 = b[o + 1], v2 = b[o + 2], v3 = b[o + 3]
        if (v0 < lo0) lo0 = v0
        if (v0 > hi0) hi0 = v0
        if (v1 < lo1) lo1 = v1
        if (v1 > hi1) hi1 = v1
        if (v2 < lo2) lo2 = v2
        if (v2 > hi2) hi2 = v2
        if (v3 < lo3) lo3 = v3
        if (v3 > hi3) hi3 = v3
      }
      for (let o = j, t = 0; o < n; o += w, t++) {
        const v0 = c[o], v1 = c[o + 1], v2 = c[o + 2], v3 = c[o + 3]
        const d0 = v0 - b[o], d1 = v1 - b[o + 1], d2 = v2 - b[o + 2], d3 = v3 - b[o + 3]
        let s = sq[t]
        s += d0 * d0
        s += d1 * d1
        s += d2 * d2
        s += d3 * d3
        sq[t] = s
        if (!(v0 >= lo0 && v0 <= hi0 && v1 >= lo1 && v1 <= hi1 && v2 >= lo2 && v2 <= hi2 && v3 >= lo3 && v3 <= hi3)) outside[t] = 1
      }
    }
    for (; j + 2 <= w; j += 2) {
      let lo0 = Infinity, hi0 = -Infinity, lo1 = Infinity, hi1 = -Infinity
      for (let o = j; o < n; o += w) {
        const v0 = b[o], v1 = b[o + 1]
        if (v0 < lo0) lo0 = v0
        if (v0 > hi0) hi0 = v0
        if (v1 < lo1) lo1 = v1
        if (v1 > hi1) hi1 = v1
      }
      for (let o = j, t = 0; o < n; o += w, t++) {
        const v0 = c[o], v1 = c[o + 1]
        const d0 = v0 - b[o], d1 = v1 - b[o + 1]
        let s = sq[t]
        s += d0 * d0
        s += d1 * d1
        sq[t] = s
        if (!(v0 >= lo0 && v0 <= hi0 && v1 >= lo1 && v1 <= hi1)) outside[t] = 1
      }
    }
    if (j < w) {
      let lo = Infinity, hi = -Infinity
      for (let o = j; o < n; o += w) {
        const v = b[o]
        if (v < lo) lo = v
        if (v > hi) hi = v
      }
      for (let o = j, t = 0; o < n; o += w, t++) {
        const v = c[o]
        const d = v - b[o]
        sq[t] += d * d
        if (!(v >= lo && v <= hi)) outside[t] = 1
      }
    }
  }
  let normSum = 0
  let outCount = 0
  for (let t = 0; t < steps; t++) {
    normSum += Math.sqrt(sq[t])
    outCount += outside[t]
  }
  return { steps, action_l2_mean: normSum / steps, ood_action_share_candidate: outCount / steps }
}

/** Copies one step's value into the slot's buffer, checking its shape against the baseline's. */
function writeStep(slot: Slot, step: number, value: unknown): void {
  const buf = slot.candidate
  const off = step * slot.width
  if (typeof value === 'number') {
    if (slot.stepShape.length !== 0) throw shapeError(slot.key, [], slot.stepShape, ' per step')
    buf[off] = value
    return
  }
  if (typeof value !== 'object' || value === null) throw new EpisodicError('invalid', `action key ${JSON.stringify(slot.key)}: expected a number, an array or { shape, data }, got ${typeof value}`)
  let data: ArrayLike<number | bigint>
  if ('shape' in value && 'data' in value) {
    const v = value as { shape: readonly number[]; data: ArrayLike<number | bigint> }
    if (!sameShape(v.shape, slot.stepShape) || v.data.length !== slot.width) throw shapeError(slot.key, v.shape, slot.stepShape, ' per step')
    data = v.data
  } else {
    data = value as ArrayLike<number | bigint>
    if (slot.stepShape.length !== 1 || data.length !== slot.width) throw shapeError(slot.key, [data.length], slot.stepShape, ' per step')
  }
  const w = slot.width
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    for (let j = 0; j < w; j++) buf[off + j] = Number(data[j])
  } else {
    const nums = data as ArrayLike<number>
    for (let j = 0; j < w; j++) buf[off + j] = nums[j]
  }
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

function shapeError(key: string, candidate: readonly number[], baseline: readonly number[], perStep = ''): EpisodicError {
  const msg = `candidate shape [${candidate.join(', ')}] does not match baseline shape [${baseline.join(', ')}]${perStep}`
  return new EpisodicError('invalid', `action key ${JSON.stringify(key)}: ${msg}`)
}

/** Leading dimension shared by every baseline array that has one (0 when none has). */
function stepCount(baseline: Record<string, NdArray>): number {
  let steps: number | undefined
  for (const [key, a] of Object.entries(baseline)) {
    if (a.shape.length === 0) continue
    if (steps !== undefined && a.shape[0] !== steps) {
      throw new EpisodicError('invalid', `baseline action key ${JSON.stringify(key)} has ${a.shape[0]} steps, other keys have ${steps}`)
    }
    steps = a.shape[0]
  }
  return steps ?? 0
}

/** The array as float64 (shared, not copied, when it already is). */
function toFloat64(data: TypedArray): Float64Array {
  if (data instanceof Float64Array) return data
  const out = new Float64Array(data.length)
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    for (let i = 0; i < data.length; i++) out[i] = Number(data[i])
  } else {
    out.set(data)
  }
  return out
}
