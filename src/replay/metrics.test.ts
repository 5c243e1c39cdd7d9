import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { actionMetrics, CandidateRecorder, type ActionMetrics } from './metrics.ts'
import { stepView, type NdArray } from './npz/index.ts'

const nd = (shape: number[], values: number[]): NdArray => ({ dtype: 'float64', shape, data: Float64Array.from(values), order: 'C' })

/** The contract's definitions written as plainly as possible, over rows of components. */
function reference(baseline: Record<string, number[][]>, candidate: Record<string, number[][]>): ActionMetrics {
  const shared = Object.keys(baseline).filter((k) => k in candidate)
  const steps = Object.values(baseline)[0]?.length ?? 0
  if (shared.length === 0 || steps === 0) return { steps, action_l2_mean: null, ood_action_share_candidate: null }
  let normSum = 0
  let outside = 0
  for (let t = 0; t < steps; t++) {
    let sq = 0
    let out = false
    for (const k of shared) {
      baseline[k][t].forEach((b, j) => {
        const c = candidate[k][t][j]
        sq += (c - b) ** 2
        const column = baseline[k].map((row) => row[j]).filter((v) => !Number.isNaN(v))
        if (!(c >= Math.min(...column) && c <= Math.max(...column))) out = true
      })
    }
    normSum += Math.sqrt(sq)
    if (out) outside++
  }
  return { steps, action_l2_mean: normSum / steps, ood_action_share_candidate: outside / steps }
}

describe('action metrics', () => {
  it('computes the worked example', () => {
    const baseline = { '/arm': nd([2, 2], [0, 0, 1, 1]) }
    const candidate = { '/arm': nd([2, 2], [3, 4, 1, 1]), '/extra': nd([1], [9]) }
    expect(actionMetrics(baseline, candidate)).toEqual({ steps: 2, action_l2_mean: 2.5, ood_action_share_candidate: 0.5 })
    const rec = new CandidateRecorder(baseline)
    rec.record(0, { '/arm': [3, 4], '/extra': 1 })
    rec.record(1, { '/arm': new Float32Array([1, 1]), _outcome: { success: true } })
    expect(rec.metrics()).toEqual({ steps: 2, action_l2_mean: 2.5, ood_action_share_candidate: 0.5 })
  })

  it('sums squared differences across all shared keys before the square root', () => {
    const baseline = { a: nd([1, 1], [0]), b: nd([1, 1], [0]), c: nd([1], [0]) }
    const rec = new CandidateRecorder(baseline)
    rec.record(0, { a: [3], b: { shape: [1], data: [4] }, c: 0 })
    expect(rec.metrics().action_l2_mean).toBe(5)
  })

  it('is null with no shared key or zero steps', () => {
    expect(actionMetrics({ a: nd([2, 1], [1, 2]) }, { b: nd([2, 1], [1, 2]) })).toEqual({ steps: 2, action_l2_mean: null, ood_action_share_candidate: null })
    expect(actionMetrics({ a: nd([0, 3], []) }, { a: nd([0, 3], []) })).toEqual({ steps: 0, action_l2_mean: null, ood_action_share_candidate: null })
    const rec = new CandidateRecorder({ a: nd([2, 1], [1, 2]) })
    rec.record(0, { other: [1] })
    rec.record(1, {})
    expect(rec.metrics().action_l2_mean).toBeNull()
    expect(new CandidateRecorder({}).metrics()).toEqual({ steps: 0, action_l2_mean: null, ood_action_share_candidate: null })
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
    expect(rec.metrics()).toEqual({ steps: 2, action_l2_mean: 2, ood_action_share_candidate: 0.5 })
  })

  it('treats NaN candidates as outside the range and ignores NaN in the baseline range', () => {
    const m = actionMetrics({ a: nd([3], [NaN, 0, 2]) }, { a: nd([3], [NaN, 1, 3]) })
    expect(m.ood_action_share_candidate).toBeCloseTo(2 / 3, 15)
    expect(m.action_l2_mean).toBeNaN()
  })

  it('matches the reference on random episodes, through both entry points (property)', () => {
    const value = fc.oneof({ arbitrary: fc.double({ min: -10, max: 10, noNaN: true }), weight: 8 }, { arbitrary: fc.constantFrom(0, 1, -1), weight: 3 }, { arbitrary: fc.constant(NaN), weight: 1 })
    const episode = fc
      .record({
        steps: fc.integer({ min: 0, max: 13 }),
        keys: fc.uniqueArray(fc.constantFrom('/a', '/b/c', '/d', 'e'), { minLength: 1, maxLength: 4 }),
        stepShapes: fc.array(fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }), { minLength: 4, maxLength: 4 }),
        candidateKeys: fc.subarray(['/a', '/b/c', '/d', 'e', '/only/candidate']),
        seed: fc.array(value, { minLength: 64, maxLength: 64 }),
        copyShare: fc.double({ min: 0, max: 1, noNaN: true }),
      })
    fc.assert(fc.property(episode, ({ steps, keys, stepShapes, candidateKeys, seed, copyShare }) => {
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
    }), { numRuns: 1000 })
  })
})
