/**
 * Each statistic against reference values computed independently with
 * scipy / numpy by `reference_values.py` beside this file (re-run it to
 * check the constants).
 */
import { describe, expect, it } from 'vitest'
import { mcnemarMidP, newcombePaired, wilson } from './binary.ts'
import { bootstrapMeanIntervals, quantileSorted } from './bootstrap.ts'
import { Z_80, Z_975 } from './normal.ts'
import { fnv1a32, seededUint32, seedState, uniformIndex } from './rng.ts'
import { pairedBinarySampleSize, pairedMeanSampleSize } from './sample-size.ts'

const close = (actual: readonly number[] | null, expected: readonly number[], digits = 12) => {
  expect(actual).not.toBeNull()
  expected.forEach((x, i) => expect(actual![i]).toBeCloseTo(x, digits))
}

describe('normal quantiles', () => {
  it('are scipy.stats.norm.ppf(0.975) and norm.ppf(0.8)', () => {
    expect(Z_975).toBe(1.959963984540054)
    expect(Z_80).toBe(0.8416212335729143)
  })
})

describe('wilson', () => {
  it('matches the score interval', () => {
    close(wilson(0, 10), [0, 0.2775327998628892])
    close(wilson(3, 10), [0.10779126740630099, 0.6032218525388546])
    close(wilson(10, 10), [0.7224672001371107, 1])
    close(wilson(81, 263), [0.2552885198782742, 0.36620957698280004])
  })
})

describe('newcombePaired (Newcombe 1998, method 10)', () => {
  // [candidate and baseline 1, candidate only, baseline only, neither] -> interval of p_candidate - p_baseline
  const cases: Array<[[number, number, number, number], [number, number]]> = [
    [[1, 1, 7, 12], [-0.506920226686141, -0.02555912416485978]], // Bentur et al. 2009 (Fagerland, Lydersen & Laake, ch. 8)
    [[59, 6, 16, 80], [-0.11862119563870992, -0.004625113933050061]], // Cavo et al. 2012 (same book)
    [[12, 9, 2, 7], [0.018220351546576585, 0.41752686929211613]], // ad - bc above n/2: corrected phi
    [[0, 0, 0, 5], [-0.43448246478317476, 0.43448246478317476]], // zero margins: phi = 0
    [[3, 0, 0, 0], [-0.5614970317550454, 0.5614970317550454]],
    [[5, 5, 0, 0], [0.11736746745022203, 0.7634069094874361]], // ad - bc < 0
  ]
  it.each(cases)('table %j', ([both, candidateOnly, baselineOnly, neither], expected) => {
    close(newcombePaired({ both, candidateOnly, baselineOnly, neither }), expected)
  })

  it('is null for an empty table and stays within [-1, 1]', () => {
    expect(newcombePaired({ both: 0, candidateOnly: 0, baselineOnly: 0, neither: 0 })).toBeNull()
    const [lo, hi] = newcombePaired({ both: 0, candidateOnly: 40, baselineOnly: 0, neither: 0 })!
    expect(lo).toBeGreaterThan(0)
    expect(hi).toBeLessThanOrEqual(1)
  })
})

describe('mcnemarMidP', () => {
  // 2 * binom.cdf(k, m, .5) - binom.pmf(k, m, .5), k = min(b, c), m = b + c
  it.each([
    [1, 7, 0.039062500000000014],
    [6, 16, 0.03468966484069824],
    [0, 0, 1],
    [3, 3, 1],
    [0, 12, 0.0002441406249999999],
    [480, 520, 0.20610731083295378],
  ])('b=%i c=%i', (b, c, p) => {
    expect(mcnemarMidP(b, c)).toBeCloseTo(p, 12)
    expect(mcnemarMidP(c, b)).toBeCloseTo(p, 12)
  })
})

describe('seeded random source', () => {
  it('hashes with FNV-1a (published vectors) and streams xoshiro128**', () => {
    expect(['', 'a', 'eval-run'].map(fnv1a32)).toEqual([2166136261, 3826002220, 755437119])
    const next = seededUint32('seed')
    expect(Array.from({ length: 5 }, next)).toEqual([1327162122, 3359510752, 506033461, 1895205449, 1113308769])
  })

  it('gives the inline generator the same state the closure starts from, and advances it in place', () => {
    const state = seedState('seed')
    const next = seededUint32('seed')
    bootstrapMeanIntervals([Float64Array.of(1, 2, 3)], state, 1) // one resample: three draws
    for (let i = 0; i < 3; i++) next()
    const continued = bootstrapMeanIntervals([Float64Array.of(0, 10)], state, 1)[0]!
    // The next two draws of the closure pick the same indices as the inline stream did.
    const picks = [next(), next()].map((d) => Math.floor((d * 2) / 4294967296))
    const mean = (picks[0]! * 10 + picks[1]! * 10) / 2
    expect(continued).toEqual([mean, mean])
  })

  it('draws indices in range, roughly uniformly', () => {
    const next = seededUint32('uniform')
    const counts = new Uint32Array(10)
    for (let i = 0; i < 100_000; i++) counts[uniformIndex(next, 10)]++
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500)
  })
})

describe('bootstrap', () => {
  it('interpolates percentiles as numpy does', () => {
    const sorted = Float64Array.from([3, 1, 4, 1.5, 9]).sort()
    expect([0.025, 0.5, 0.975].map((q) => quantileSorted(sorted, q))).toEqual([1.05, 3, 8.5])
  })

  it('matches the numpy re-implementation for the same seed', () => {
    const d = Float64Array.from([0.5, -1.0, 2.0, 3.5, 0.0, 1.25, -0.75, 2.5])
    const [interval] = bootstrapMeanIntervals([d], seedState('run-1/reward_mean'))
    close(interval!, [-0.03125, 2.09375])
  })

  it('is deterministic, serves several groups from the same draws, and needs two pairs', () => {
    const d = Float64Array.from({ length: 50 }, (_, i) => Math.sin(i))
    const twice = Float64Array.from(d, (x) => 2 * x)
    const [a, b] = bootstrapMeanIntervals([d, twice], seedState('x'))
    expect(bootstrapMeanIntervals([d], seedState('x'))[0]).toEqual(a)
    close(b!, [2 * a![0], 2 * a![1]])
    expect(bootstrapMeanIntervals([Float64Array.of(1)], seedState('x'))).toEqual([null])
    expect(() => bootstrapMeanIntervals([d, Float64Array.of(1, 2)], seedState('x'))).toThrow(RangeError)
  })
})

describe('sample sizes (80% power, two-sided 5%)', () => {
  it('matches the formulas evaluated with scipy quantiles', () => {
    expect(pairedBinarySampleSize(0.3, 0.1)).toBe(234)
    expect(pairedBinarySampleSize(0.3, -0.1)).toBe(234)
    expect(pairedMeanSampleSize(2, 0.5)).toBe(126)
    expect(pairedMeanSampleSize(2, -0.5)).toBe(126)
  })

  it('is null when there is no effect or no spread to estimate from', () => {
    expect(pairedBinarySampleSize(0.3, 0)).toBeNull()
    expect(pairedBinarySampleSize(0, 0)).toBeNull()
    expect(pairedMeanSampleSize(0, 1)).toBeNull()
    expect(pairedMeanSampleSize(1, 0)).toBeNull()
  })
})
