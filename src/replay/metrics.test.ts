import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ActionMetrics, actionMetrics, CandidateRecorder } from './metrics.ts'
import { type NdArray, stepView } from './npz/index.ts'

const nd = (shape: number[], values: number[]): NdArray => ({ dtype: 'float64', shape, data: Float64Array.from(values), order: 'C' })

const none = (steps: number): ActionMetrics => ({
  steps,
  action_l2_mean: null,
  action_l2_normalized_mean: null,
  action_l2_by_key: {},
  ood_action_share_candidate: null,
  nonfinite_steps: 0,
})

/** The contract's definitions written as plainly as possible, over rows of components. */
function reference(baseline: Record<string, number[][]>, candidate: Record<string, number[][]>): ActionMetrics {
  const shared = Object.keys(baseline).filter((k) => k in candidate)
  const steps = Object.values(baseline)[0]?.length ?? 0
  if (shared.length === 0 || steps === 0) return none(steps)
  const range = (k: string, j: number) => {
    const column = baseline[k].map((row) => row[j]).filter(Number.isFinite)
    const lo = Math.min(...column)
    const hi = Math.max(...column)
    return { lo, hi, inv: hi > lo ? 1 / (hi - lo) : 1 }
  }
  const keySum: Record<string, number> = {}
  const keySteps: Record<string, number> = {}
  for (const k of shared) keySum[k] = keySteps[k] = 0
  let normSum = 0
  let normalizedSum = 0
  let outside = 0
  let counted = 0
  let nonfinite = 0
  for (let t = 0; t < steps; t++) {
    let sq = 0
    let sqn = 0
    let out = false
    let any = false
    let bad = false
    for (const k of shared) {
      let kq = 0
      let kAny = false
      baseline[k][t].forEach((b, j) => {
        const c = candidate[k][t][j]
        const d = c - b
        if (!Number.isFinite(d)) {
          bad = true
          return
        }
        const { lo, hi, inv } = range(k, j)
        kq += d * d
        sqn += (d * inv) * (d * inv)
        kAny = true
        if (!(c >= lo && c <= hi)) out = true
      })
      if (kAny) {
        keySum[k] += Math.sqrt(kq)
        keySteps[k]++
        sq += kq
        any = true
      }
    }
    if (bad) nonfinite++
    if (!any) continue
    counted++
    normSum += Math.sqrt(sq)
    normalizedSum += Math.sqrt(sqn)
    if (out) outside++
  }
  const byKey = Object.fromEntries(shared.map((k) => [k, keySteps[k] === 0 ? null : keySum[k] / keySteps[k]]))
  if (counted === 0) return { ...none(steps), action_l2_by_key: byKey, nonfinite_steps: nonfinite }
  return {
    steps,
    action_l2_mean: normSum / counted,
    action_l2_normalized_mean: normalizedSum / counted,
    action_l2_by_key: byKey,
    ood_action_share_candidate: outside / counted,
    nonfinite_steps: nonfinite,
  }
}

describe('action metrics', () => {
  it('computes the worked example', () => {
    const baseline = { '/arm': nd([2, 2], [0, 0, 1, 1]) }
    const candidate = { '/arm': nd([2, 2], [3, 4, 1, 1]), '/extra': nd([1], [9]) }
    // Component ranges are [0, 1], so the normalized norm equals the plain one here.
    const expected = {
      steps: 2,
      action_l2_mean: 2.5,
      action_l2_normalized_mean: 2.5,
      action_l2_by_key: { '/arm': 2.5 },
      ood_action_share_candidate: 0.5,
      nonfinite_steps: 0,
    }
    expect(actionMetrics(baseline, candidate)).toEqual(expected)
    const rec = new CandidateRecorder(baseline)
    rec.record(0, { '/arm': [3, 4], '/extra': 1 })
    rec.record(1, { '/arm': new Float32Array([1, 1]), _outcome: { success: true } })
    expect(rec.metrics()).toEqual(expected)
  })

  it('divides each component by its baseline range for the normalized norm, and reports each key', () => {
    // /a ranges over [0, 10] and [0, 0.1]; /b has zero range (uses 1).
    const baseline = { '/a': nd([2, 2], [0, 0, 10, 0.1]), '/b': nd([2], [5, 5]) }
    const candidate = { '/a': nd([2, 2], [3, 0.04, 10, 0.1]), '/b': nd([2], [5, 5]) }
    const m = actionMetrics(baseline, candidate)
    expect(m.action_l2_by_key).toEqual({ '/a': Math.sqrt(9 + 0.04 ** 2) / 2, '/b': 0 })
    expect(m.action_l2_normalized_mean).toBeCloseTo(Math.sqrt(0.3 ** 2 + 0.4 ** 2) / 2, 12)
  })

  it('sums squared differences across all shared keys before the square root', () => {
    const baseline = { a: nd([1, 1], [0]), b: nd([1, 1], [0]), c: nd([1], [0]) }
    const rec = new CandidateRecorder(baseline)
    rec.record(0, { a: [3], b: { shape: [1], data: [4] }, c: 0 })
    expect(rec.metrics().action_l2_mean).toBe(5)
  })

  it('is null with no shared key or zero steps', () => {
    expect(actionMetrics({ a: nd([2, 1], [1, 2]) }, { b: nd([2, 1], [1, 2]) })).toEqual(none(2))
    expect(actionMetrics({ a: nd([0, 3], []) }, { a: nd([0, 3], []) })).toEqual(none(0))
    const rec = new CandidateRecorder({ a: nd([2, 1], [1, 2]) })
    rec.record(0, { other: [1] })
    rec.record(1, {})
    expect(rec.metrics().action_l2_mean).toBeNull()
    expect(rec.unpaired()).toEqual({ baseline: ['a'], policy: ['other'] })
    expect(new CandidateRecorder({}).metrics()).toEqual(none(0))
    expect(new CandidateRecorder({}).unpaired()).toBeNull()
    const paired = new CandidateRecorder({ a: nd([1, 1], [1]), b: nd([1, 1], [1]) })
    paired.record(0, { a: [1], _outcome: { success: true } })
    expect(paired.unpaired()).toBeNull()
  })

  it('names the key and both shapes on a shape mismatch', () => {
    const baseline = { '/joint_states/position': nd([2, 7], new Array(14).fill(0)) }
    expect(() => actionMetrics(baseline, { '/joint_states/position': nd([2, 6], new Array(12).fill(0)) })).toThrow(
      'action key "/joint_states/position": candidate shape [2, 6] does not match baseline shape [2, 7]',
    )
    const rec = new CandidateRecorder(baseline)
    expect(() => rec.record(0, { '/joint_states/position': new Float64Array(6) })).toThrow(
      'action key "/joint_states/position": candidate shape [6] does not match baseline shape [7] per step',
    )
    expect(() => rec.record(0, { '/joint_states/position': { shape: [7, 1], data: new Float64Array(7) } })).toThrow('candidate shape [7, 1]')
    expect(() => rec.record(0, { '/joint_states/position': 1 })).toThrow('candidate shape [] does not match baseline shape [7]')
    expect(() => rec.record(0, { '/joint_states/position': 'x' })).toThrow('expected a number, an array or { shape, data }')
  })

  it('refuses a key returned at some steps only, and steps outside the episode', () => {
    const rec = new CandidateRecorder({ a: nd([3], [1, 2, 3]) })
    rec.record(0, { a: 1 })
    expect(() => rec.metrics()).toThrow('action key "a" was returned at 1 of 3 steps')
    expect(() => rec.record(3, { a: 1 })).toThrow(RangeError)
  })

  it('accepts integer, float32 and bigint baselines and actions', () => {
    const baseline: Record<string, NdArray> = {
      i: { dtype: 'int64', shape: [2, 1], data: new BigInt64Array([1n, 5n]), order: 'C' },
      f: { dtype: 'float32', shape: [2], data: new Float32Array([0.5, 1.5]), order: 'C' },
    }
    const rec = new CandidateRecorder(baseline)
    rec.record(0, { i: new BigInt64Array([1n]), f: 0.5 })
    rec.record(1, { i: [9], f: 1.5 })
    expect(rec.metrics()).toMatchObject({ steps: 2, action_l2_mean: 2, ood_action_share_candidate: 0.5, nonfinite_steps: 0 })
    // A plain array of bigints (a copy of an int64 observation) counts as a BigInt64Array does.
    const plain = new CandidateRecorder(baseline)
    plain.record(0, { i: [1n] as unknown as number[], f: 0.5 })
    plain.record(1, { i: [9n] as unknown as number[], f: 1.5 })
    expect(plain.metrics()).toEqual(rec.metrics())
  })

  it('takes a scalar bigint or boolean as it takes them inside an array (numpy int64 and bool scalars)', () => {
    const baseline: Record<string, NdArray> = {
      grip: { dtype: 'bool', shape: [2], data: Uint8Array.of(1, 0), order: 'C' },
      count: { dtype: 'int64', shape: [2], data: BigInt64Array.of(3n, 4n), order: 'C' },
    }
    const scalars = new CandidateRecorder(baseline)
    scalars.record(0, { grip: true, count: 3n })
    scalars.record(1, { grip: true, count: 6n })
    const numbers = new CandidateRecorder(baseline)
    numbers.record(0, { grip: 1, count: 3 })
    numbers.record(1, { grip: 1, count: 6 })
    expect(scalars.metrics()).toEqual(numbers.metrics())
    expect(scalars.metrics().action_l2_mean).toBeCloseTo(Math.sqrt(5) / 2, 12)
  })

  it('leaves non-finite components out and counts their steps, instead of nulling the episode', () => {
    // Step 0: NaN on both sides; step 2: one infinite candidate component of two; the baseline range of /a[0] is [0, 2].
    const m = actionMetrics({ a: nd([3, 2], [NaN, 0, 0, 0, 2, 0]) }, { a: nd([3, 2], [NaN, 0, 1, 0, 3, Infinity]) })
    expect(m.nonfinite_steps).toBe(2)
    // Step 0 keeps its finite component (difference 0); steps 1 and 2 differ by 1 in one component.
    expect(m.action_l2_mean).toBeCloseTo(2 / 3, 15)
    expect(m.ood_action_share_candidate).toBeCloseTo(1 / 3, 15) // step 2: 3 > 2
    const allBad = actionMetrics({ a: nd([2], [NaN, 1]) }, { a: nd([2], [0, Infinity]) })
    expect(allBad).toEqual({ ...none(2), action_l2_by_key: { a: null }, nonfinite_steps: 2 })
  })

  it('matches the reference on random episodes, through both entry points (property)', () => {
    const value = fc.oneof({ arbitrary: fc.double({ min: -10, max: 10, noNaN: true }), weight: 8 }, { arbitrary: fc.constantFrom(0, 1, -1), weight: 3 }, {
      arbitrary: fc.constantFrom(NaN, Infinity, -Infinity),
      weight: 1,
    })
    const episode = fc
      .record({
        steps: fc.integer({ min: 0, max: 13 }),
        keys: fc.uniqueArray(fc.constantFrom('/a', '/b/c', '/d', 'e'), { minLength: 1, maxLength: 4 }),
        stepShapes: fc.array(fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }), { minLength: 4, maxLength: 4 }),
        candidateKeys: fc.subarray(['/a', '/b/c', '/d', 'e', '/only/candidate']),
        seed: fc.array(value, { minLength: 64, maxLength: 64 }),
        copyShare: fc.double({ min: 0, max: 1, noNaN: true }),
      })
    fc.assert(
      fc.property(episode, ({ steps, keys, stepShapes, candidateKeys, seed, copyShare }) => {
        let n = 0
        const next = (): number => seed[n++ % seed.length] * (1 + (n % 7))
        const baseRows: Record<string, number[][]> = {}
        const candRows: Record<string, number[][]> = {}
        const baseline: Record<string, NdArray> = {}
        const candidate: Record<string, NdArray> = {}
        keys.forEach((key, i) => {
          const width = stepShapes[i].reduce((a, b) => a * b, 1)
          baseRows[key] = Array.from({ length: steps }, () => Array.from({ length: width }, next))
          baseline[key] = nd([steps, ...stepShapes[i]], baseRows[key].flat())
        })
        for (const key of candidateKeys) {
          const shape = baseline[key]?.shape ?? [steps, 2]
          const width = shape.slice(1).reduce((x, y) => x * y, 1)
          // Mix copies of the baseline, other in-range baseline values and free values.
          const pick = (t: number, j: number): number => {
            const r = Math.abs(next()) / 10
            if (!(key in baseRows) || r > copyShare) return next()
            return r < copyShare / 2 ? baseRows[key][t][j] : baseRows[key][(t + 1) % steps][j]
          }
          candRows[key] = Array.from({ length: steps }, (_, t) => Array.from({ length: width }, (_, j) => pick(t, j)))
          candidate[key] = nd(shape, candRows[key].flat())
        }
        const expected = reference(baseRows, candRows)
        expect(actionMetrics(baseline, candidate)).toEqual(expected)
        const rec = new CandidateRecorder(baseline)
        for (let t = 0; t < steps; t++) {
          const action: Record<string, unknown> = {}
          for (const key of candidateKeys) {
            const view = stepView(candidate[key], t)
            action[key] = view.shape.length === 0 ? view.data[0] : view.shape.length === 1 ? view.data : view
          }
          rec.record(t, action)
        }
        expect(rec.metrics()).toEqual(expected)
      }),
      { numRuns: 1000 },
    )
  })

  it('treats a baseline key named like an Object.prototype member as omitted when the policy leaves it out', () => {
    // A plain action object inherits `constructor`, `toString`, `__proto__`...: only own keys are returned values.
    const baseline: Record<string, NdArray> = { '/a': nd([2], [0, 1]) }
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      Object.defineProperty(baseline, key, { value: nd([2], [5, 6]), enumerable: true })
    }
    const rec = new CandidateRecorder(baseline)
    rec.record(0, { '/a': 0.5 })
    rec.record(1, { '/a': 1 })
    expect(rec.metrics()).toEqual(actionMetrics(baseline, { '/a': nd([2], [0.5, 1]) }))
    expect(rec.metrics().action_l2_by_key).toEqual({ '/a': 0.25 })
    // ...and as shared when the policy does return it as its own key.
    const own = new CandidateRecorder({ constructor: nd([1], [1]) })
    own.record(0, JSON.parse('{"constructor": 4}'))
    expect(own.metrics().action_l2_mean).toBe(3)
  })
})
