/**
 * Coverage: on 2,000 simulated paired data sets with a known true delta,
 * the 95% intervals must contain it between 93% and 97% of the time (fixed
 * seeds, so the test is deterministic).
 */
import { describe, expect, it } from 'vitest'
import { newcombePaired } from './binary.ts'
import { bootstrapMeanIntervals } from './bootstrap.ts'
import { seededUint32, seedState } from './rng.ts'

const DATA_SETS = 2000

/** Uniform (0, 1) from 32-bit draws. */
const uniform = (next: () => number) => (next() + 0.5) / 4294967296

describe('95% interval coverage (property)', () => {
  it('bootstrap_paired covers a known mean difference 93-97% of the time', () => {
    // Each episode: baseline ~ N(10, 2), candidate = baseline + 0.3 + N(0, 1); true delta 0.3.
    const data = seededUint32('coverage/bootstrap')
    const n = 100
    const trueDelta = 0.3
    let covered = 0
    for (let s = 0; s < DATA_SETS; s++) {
      const d = new Float64Array(n)
      for (let i = 0; i < n; i++) {
        const gauss = Math.sqrt(-2 * Math.log(uniform(data))) * Math.cos(2 * Math.PI * uniform(data))
        d[i] = trueDelta + gauss
      }
      const [interval] = bootstrapMeanIntervals([d], seedState(`coverage/resample/${s}`))
      if (interval![0] <= trueDelta && trueDelta <= interval![1]) covered++
    }
    const share = covered / DATA_SETS
    expect(share).toBeGreaterThanOrEqual(0.93)
    expect(share).toBeLessThanOrEqual(0.97)
  }, 120_000)

  it('newcombe_paired covers a known difference of paired proportions 93-97% of the time', () => {
    // Cell probabilities: both 0.45, candidate only 0.2, baseline only 0.1, neither 0.25 -> delta 0.1.
    const data = seededUint32('coverage/newcombe')
    const n = 80
    const trueDelta = 0.2 - 0.1
    let covered = 0
    for (let s = 0; s < DATA_SETS; s++) {
      const table = { both: 0, candidateOnly: 0, baselineOnly: 0, neither: 0 }
      for (let i = 0; i < n; i++) {
        const u = uniform(data)
        if (u < 0.45) table.both++
        else if (u < 0.65) table.candidateOnly++
        else if (u < 0.75) table.baselineOnly++
        else table.neither++
      }
      const [lo, hi] = newcombePaired(table)!
      if (lo <= trueDelta && trueDelta <= hi) covered++
    }
    const share = covered / DATA_SETS
    expect(share).toBeGreaterThanOrEqual(0.93)
    expect(share).toBeLessThanOrEqual(0.97)
  })
})
