import { describe, expect, it } from 'vitest'
import { downsample, visibleSteps } from './downsample.ts'

const time = (i: number) => i / 10

describe('min/max downsampling', () => {
  it('keeps short series whole, with non-finite values and missing tails as gaps', () => {
    const a = Float64Array.from([1, NaN, 3, Infinity])
    const b = Float64Array.from([5, 6])
    expect(downsample([a, b], time, 0, 4, 10)).toEqual([[0, 0.1, 0.2, 0.3], [1, null, 3, null], [5, 6, null, null]])
    expect(downsample([a], time, 1, 3, 10)).toEqual([[0.1, 0.2], [null, 3]])
  })

  it("keeps each bucket's extremes in the order they occur", () => {
    const up = Float64Array.from([0, 5, 1, 9, 7, 2, 8, 3])
    const [x, y] = downsample([up], time, 0, 8, 2)
    expect(x).toEqual([0, 0.3, 0.4, 0.7])
    expect(y).toEqual([0, 9, 2, 8]) // bucket 1: min 0 (step 0), then max 9 (step 3); bucket 2: min 2 (step 5), then max 8 (step 6)
  })

  it('orders min before max when the min comes first, and max before min otherwise', () => {
    const [, y] = downsample([Float64Array.from([9, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0])], (i) => i, 0, 12, 2)
    expect(y).toEqual([9, 0, 0, 1])
  })

  it('reduces 100,000 steps to two points per pixel and never loses an extreme', () => {
    const n = 100_000
    const c = new Float64Array(n)
    for (let i = 0; i < n; i++) c[i] = Math.sin(i / 1000)
    c[54_321] = 42
    c[77_777] = -42
    const [x, y] = downsample([c], (i) => i, 0, n, 800)
    expect(x.length).toBe(1600)
    expect(y!.length).toBe(1600)
    expect(Math.max(...(y as number[]))).toBe(42)
    expect(Math.min(...(y as number[]))).toBe(-42)
    expect(x[0]).toBe(0)
    expect(x[x.length - 1]).toBe(n - 1)
  })

  it('a bucket with only gaps stays a gap', () => {
    const c = new Float64Array(40).fill(NaN)
    c[0] = 1
    const [, y] = downsample([c], (i) => i, 0, 40, 4)
    expect(y).toEqual([1, 1, null, null, null, null, null, null])
  })

  it('finds the steps of a zoomed x range, with a step of margin', () => {
    expect(visibleSteps(1000, time, 10, 20)).toEqual([99, 202])
    expect(visibleSteps(1000, time, -5, 500)).toEqual([0, 1000])
    expect(visibleSteps(1000, (i) => i, 998.5, 999)).toEqual([997, 1000])
  })
})
