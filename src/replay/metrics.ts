import { MetricsError } from './errors.ts'
import { type NdArray, sizeOf, type TypedArray } from './npz/index.ts'

/**
 * Per-episode action metrics, exactly as the contract's "Metric blob" and
 * "Metric blob additions" define them. A key counts when it is in the
 * baseline (with a step dimension) and the candidate returned it; other keys
 * are ignored, as the policy contract says.
 *
 * - `action_l2_mean`: mean over steps of sqrt(sum over shared keys and
 *   components of (candidate - baseline)^2).
 * - `action_l2_normalized_mean`: the same with each component's difference
 *   divided by the baseline's range of that component over the episode
 *   (a component with zero range uses 1), so joints in radians and grippers
 *   in millimetres weigh alike.
 * - `action_l2_by_key`: per key, the mean over steps of the norm at that key.
 * - `ood_action_share_candidate`: share of steps where some candidate
 *   component lies outside the baseline's [min, max] for that component over
 *   the episode.
 * - `nonfinite_steps`: steps where some component (candidate or baseline)
 *   was NaN or infinite. Such components are left out of every metric (and
 *   of the baseline ranges); the step counts with its finite components, and
 *   a step with none at all is left out of the means.
 *
 * The means are `null` when no key is shared or no step has a finite component.
 */
export interface ActionMetrics {
  /** Steps in the episode. */
  steps: number
  /** Mean per-step L2 distance between candidate and baseline actions, over the shared keys. */
  action_l2_mean: number | null
  /** The same distance with each component scaled by the baseline's range for it. */
  action_l2_normalized_mean: number | null
  /** The mean L2 distance of each shared key on its own. */
  action_l2_by_key: Record<string, number | null>
  /** Share of steps where some candidate component falls outside the baseline's range. */
  ood_action_share_candidate: number | null
  /** Steps with a NaN or infinite component, left out of the metrics. */
  nonfinite_steps: number
}

/** One key's values for one step, as a policy returns them: a scalar, a flat array, or `{ shape, data }`. */
export type ActionValue = number | bigint | boolean | ArrayLike<number | bigint> | { shape: readonly number[]; data: ArrayLike<number> | TypedArray }

interface Slot {
  key: string
  stepShape: number[]
  width: number
  baseline: Float64Array
  candidate: Float64Array
  seen: Uint8Array
  count: number
  /** The key names an `Object.prototype` member (`constructor`, `__proto__`...): a plain action inherits it, so only an own value counts. */
  inherited: boolean
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
  /** The keys the policy returned at step 0, for `unpaired()`. */
  #firstKeys: string[] = []

  /** Preallocates one slot per baseline action key; `baseline` is the decoded `actions.npz`. */
  constructor(baseline: Record<string, NdArray>) {
    this.steps = stepCount(baseline)
    this.#slots = Object.entries(baseline)
      .filter(([, a]) => a.shape.length > 0)
      .map(([key, a]) => {
        const width = sizeOf(a.shape.slice(1))
        const candidate = new Float64Array(a.data.length)
        return {
          key,
          stepShape: a.shape.slice(1),
          width,
          baseline: toFloat64(a.data),
          candidate,
          seen: new Uint8Array(this.steps),
          count: 0,
          inherited: key in Object.prototype,
        }
      })
  }

  /** Stores the action the policy returned at `step` (0-based); each value is an `ActionValue`. */
  record(step: number, action: Readonly<Record<string, unknown>>): void {
    if (!(step >= 0 && step < this.steps)) throw new RangeError(`record: step ${step} outside [0, ${this.steps})`)
    if (step === 0) this.#firstKeys = Object.keys(action).filter((key) => key !== '_outcome')
    const slots = this.#slots
    for (let s = 0; s < slots.length; s++) {
      const slot = slots[s]
      const value = action[slot.key]
      if (value === undefined || (slot.inherited && !Object.hasOwn(action, slot.key))) continue
      writeStep(slot, step, value)
      if (slot.seen[step] === 0) {
        slot.seen[step] = 1
        slot.count++
      }
    }
  }

  /**
   * When the baseline has action keys and the policy returned none of them
   * (a policy server answering `actions` without `--action-map`, say), the
   * keys on both sides: every action metric is then null. Otherwise null.
   */
  unpaired(): { baseline: string[]; policy: string[] } | null {
    if (this.steps === 0 || this.#slots.length === 0 || this.#slots.some((slot) => slot.count > 0)) return null
    return { baseline: this.#slots.map((slot) => slot.key), policy: this.#firstKeys }
  }

  /** Metrics over the recorded steps. A key returned at some steps but not all throws. */
  metrics(): ActionMetrics {
    const shared = this.#slots.filter((slot) => slot.count > 0)
    for (const slot of shared) {
      if (slot.count !== this.steps) {
        throw new MetricsError(
          slot.key,
          `action key ${JSON.stringify(slot.key)} was returned at ${slot.count} of ${this.steps} steps; return a key at every step or never`,
        )
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
  const shared: Pair[] = []
  for (const [key, b] of Object.entries(baseline)) {
    const c = Object.hasOwn(candidate, key) ? candidate[key] : undefined
    if (b.shape.length === 0 || c === undefined) continue
    if (!sameShape(c.shape, b.shape)) throw shapeError(key, c.shape, b.shape)
    shared.push({ key, width: sizeOf(b.shape.slice(1)), baseline: toFloat64(b.data), candidate: toFloat64(c.data) })
  }
  return computeMetrics(shared, steps)
}

type Pair = Pick<Slot, 'key' | 'width' | 'baseline' | 'candidate'>

/**
 * Key by key, column group by column group: a group's baseline ranges live in
 * registers. One strided pass over the group finds each component's range
 * (finite values only), the next adds the group's squared differences (plain
 * and range-normalized) into per-step sums and marks out-of-range steps.
 * Groups are 4 components wide, then 2, then 1; a group whose four differences sum
 * to a finite number takes the fast path, any other falls back to checking
 * component by component, so finite data pays one test per four components.
 * Squares are added in component order within a key, then key by key, as the
 * definition reads. `v - v === 0` is the finiteness test (false for NaN and
 * for infinities).
 */
function computeMetrics(pairs: Pair[], steps: number): ActionMetrics {
  const metrics: ActionMetrics = {
    steps,
    action_l2_mean: null,
    action_l2_normalized_mean: null,
    action_l2_by_key: {},
    ood_action_share_candidate: null,
    nonfinite_steps: 0,
  }
  if (pairs.length === 0 || steps === 0) return metrics
  const sq = new Float64Array(steps)
  const sqn = new Float64Array(steps)
  const outside = new Uint8Array(steps)
  const bad = new Uint8Array(steps)
  const valid = new Uint8Array(steps)
  const sqk = new Float64Array(steps)
  const seen = new Uint8Array(steps)
  /** One component at step t, checked on its own (the slow path). */
  const component = (t: number, c: number, b: number, lo: number, hi: number, inv: number) => {
    const d = c - b
    if (d - d !== 0) {
      bad[t] = 1
      return
    }
    sqk[t] += d * d
    const dn = d * inv
    sqn[t] += dn * dn
    seen[t] = 1
    if (!(c >= lo && c <= hi)) outside[t] = 1
  }
  // Indexed loops: a for-of here deoptimized mid-run for want of type feedback (measured).
  for (let p = 0; p < pairs.length; p++) {
    const { key, width: w, baseline: b, candidate: c } = pairs[p]!
    const n = steps * w
    sqk.fill(0)
    seen.fill(0)
    let j = 0
    for (; j + 4 <= w; j += 4) {
      let lo0 = Infinity, hi0 = -Infinity, lo1 = Infinity, hi1 = -Infinity
      let lo2 = Infinity, hi2 = -Infinity, lo3 = Infinity, hi3 = -Infinity
      for (let o = j; o < n; o += w) {
        const v0 = b[o]!, v1 = b[o + 1]!, v2 = b[o + 2]!, v3 = b[o + 3]!
        if (v0 - v0 === 0) {
          if (v0 < lo0) lo0 = v0
          if (v0 > hi0) hi0 = v0
        }
        if (v1 - v1 === 0) {
          if (v1 < lo1) lo1 = v1
          if (v1 > hi1) hi1 = v1
        }
        if (v2 - v2 === 0) {
          if (v2 < lo2) lo2 = v2
          if (v2 > hi2) hi2 = v2
        }
        if (v3 - v3 === 0) {
          if (v3 < lo3) lo3 = v3
          if (v3 > hi3) hi3 = v3
        }
      }
      const inv0 = hi0 > lo0 ? 1 / (hi0 - lo0) : 1, inv1 = hi1 > lo1 ? 1 / (hi1 - lo1) : 1
      const inv2 = hi2 > lo2 ? 1 / (hi2 - lo2) : 1, inv3 = hi3 > lo3 ? 1 / (hi3 - lo3) : 1
      for (let o = j, t = 0; o < n; o += w, t++) {
        const v0 = c[o]!, v1 = c[o + 1]!, v2 = c[o + 2]!, v3 = c[o + 3]!
        const d0 = v0 - b[o]!, d1 = v1 - b[o + 1]!, d2 = v2 - b[o + 2]!, d3 = v3 - b[o + 3]!
        const all = d0 + d1 + d2 + d3
        if (all - all === 0) {
          let s = sqk[t]!
          s += d0 * d0
          s += d1 * d1
          s += d2 * d2
          s += d3 * d3
          sqk[t] = s
          const n0 = d0 * inv0, n1 = d1 * inv1, n2 = d2 * inv2, n3 = d3 * inv3
          let sn = sqn[t]!
          sn += n0 * n0
          sn += n1 * n1
          sn += n2 * n2
          sn += n3 * n3
          sqn[t] = sn
          seen[t] = 1
          if (!(v0 >= lo0 && v0 <= hi0 && v1 >= lo1 && v1 <= hi1 && v2 >= lo2 && v2 <= hi2 && v3 >= lo3 && v3 <= hi3)) outside[t] = 1
        } else {
          component(t, v0, b[o]!, lo0, hi0, inv0)
          component(t, v1, b[o + 1]!, lo1, hi1, inv1)
          component(t, v2, b[o + 2]!, lo2, hi2, inv2)
          component(t, v3, b[o + 3]!, lo3, hi3, inv3)
        }
      }
    }
    for (; j + 2 <= w; j += 2) {
      let lo0 = Infinity, hi0 = -Infinity, lo1 = Infinity, hi1 = -Infinity
      for (let o = j; o < n; o += w) {
        const v0 = b[o]!, v1 = b[o + 1]!
        if (v0 - v0 === 0) {
          if (v0 < lo0) lo0 = v0
          if (v0 > hi0) hi0 = v0
        }
        if (v1 - v1 === 0) {
          if (v1 < lo1) lo1 = v1
          if (v1 > hi1) hi1 = v1
        }
      }
      const inv0 = hi0 > lo0 ? 1 / (hi0 - lo0) : 1, inv1 = hi1 > lo1 ? 1 / (hi1 - lo1) : 1
      for (let o = j, t = 0; o < n; o += w, t++) {
        const v0 = c[o]!, v1 = c[o + 1]!
        const d0 = v0 - b[o]!, d1 = v1 - b[o + 1]!
        const all = d0 + d1
        if (all - all === 0) {
          let s = sqk[t]!
          s += d0 * d0
          s += d1 * d1
          sqk[t] = s
          const n0 = d0 * inv0, n1 = d1 * inv1
          let sn = sqn[t]!
          sn += n0 * n0
          sn += n1 * n1
          sqn[t] = sn
          seen[t] = 1
          if (!(v0 >= lo0 && v0 <= hi0 && v1 >= lo1 && v1 <= hi1)) outside[t] = 1
        } else {
          component(t, v0, b[o]!, lo0, hi0, inv0)
          component(t, v1, b[o + 1]!, lo1, hi1, inv1)
        }
      }
    }
    for (; j < w; j++) {
      let lo = Infinity, hi = -Infinity
      for (let o = j; o < n; o += w) {
        const v = b[o]!
        if (v - v === 0) {
          if (v < lo) lo = v
          if (v > hi) hi = v
        }
      }
      const inv = hi > lo ? 1 / (hi - lo) : 1
      for (let o = j, t = 0; o < n; o += w, t++) {
        const v = c[o]!
        const d = v - b[o]!
        if (d - d !== 0) {
          bad[t] = 1
          continue
        }
        sqk[t] += d * d
        const dn = d * inv
        sqn[t] += dn * dn
        seen[t] = 1
        if (!(v >= lo && v <= hi)) outside[t] = 1
      }
    }
    let keySum = 0
    let keySteps = 0
    for (let t = 0; t < steps; t++) {
      if (seen[t] === 0) continue
      keySum += Math.sqrt(sqk[t]!)
      keySteps++
      sq[t] += sqk[t]!
      valid[t] = 1
    }
    metrics.action_l2_by_key[key] = keySteps === 0 ? null : keySum / keySteps
  }
  let normSum = 0
  let normalizedSum = 0
  let outCount = 0
  let validCount = 0
  let badCount = 0
  for (let t = 0; t < steps; t++) {
    badCount += bad[t]!
    if (valid[t] === 0) continue
    validCount++
    normSum += Math.sqrt(sq[t]!)
    normalizedSum += Math.sqrt(sqn[t]!)
    outCount += outside[t]!
  }
  metrics.nonfinite_steps = badCount
  if (validCount > 0) {
    metrics.action_l2_mean = normSum / validCount
    metrics.action_l2_normalized_mean = normalizedSum / validCount
    metrics.ood_action_share_candidate = outCount / validCount
  }
  return metrics
}

/** Copies one step's value into the slot's buffer, checking its shape against the baseline's. */
function writeStep(slot: Slot, step: number, value: unknown): void {
  const buf = slot.candidate
  const off = step * slot.width
  // A scalar: a number, or a bigint or boolean as an array's elements are taken (numpy's int64 and bool).
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    if (slot.stepShape.length !== 0) throw shapeError(slot.key, [], slot.stepShape, ' per step')
    buf[off] = Number(value)
    return
  }
  // A policy bridge hands over a value it could not read as numbers as the Error that says why.
  if (value instanceof Error) throw new MetricsError(slot.key, value.message)
  if (typeof value !== 'object' || value === null) {
    throw new MetricsError(slot.key, `action key ${JSON.stringify(slot.key)}: expected a number, an array or { shape, data }, got ${typeof value}`)
  }
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
    try {
      for (let j = 0; j < w; j++) buf[off + j] = nums[j]
    } catch {
      // A plain array holding bigints (a copy of an int64 observation): taken as a BigInt64Array is.
      for (let j = 0; j < w; j++) buf[off + j] = Number(nums[j])
    }
  }
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

function shapeError(key: string, candidate: readonly number[], baseline: readonly number[], perStep = ''): MetricsError {
  let msg = `candidate shape [${candidate.join(', ')}] does not match baseline shape [${baseline.join(', ')}]${perStep}`
  // [H, ...step shape] per step: a chunk of H steps' actions where one step's is recorded.
  if (perStep && candidate.length === baseline.length + 1 && sameShape(candidate.slice(1), baseline)) {
    msg += ` (a chunk of ${candidate[0]} steps' actions? replay compares one step's action; a policy server's chunks take --action-horizon ${candidate[0]})`
  }
  return new MetricsError(key, `action key ${JSON.stringify(key)}: ${msg}`)
}

/** Leading dimension shared by every baseline array that has one (0 when none has). */
function stepCount(baseline: Record<string, NdArray>): number {
  let steps: number | undefined
  for (const [key, a] of Object.entries(baseline)) {
    if (a.shape.length === 0) continue
    if (steps !== undefined && a.shape[0] !== steps) {
      throw new MetricsError(key, `baseline action key ${JSON.stringify(key)} has ${a.shape[0]} steps, other keys have ${steps}`)
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
