import { describe, expect, it } from 'vitest'
import { chartScale, ticks } from './chart-scale.ts'

const frame = { width: 120, height: 100, pad: { left: 10, right: 10, top: 10, bottom: 10 } }

describe('chart scale', () => {
  it('picks round ticks covering the range', () => {
    expect(ticks(0, 10)).toEqual([0, 2.5, 5, 7.5, 10])
    expect(ticks(-3.2, 41)).toEqual([0, 20, 40])
    expect(ticks(0.11, 0.19)).toEqual([0.12, 0.14, 0.16, 0.18])
    // Ticks reaching zero from below land on an exact 0 (adding steps had drifted to -5.55e-17: "-5.55e-15 pp").
    expect(ticks(-0.7, 0.05)).toEqual([-0.6, -0.4, -0.2, 0])
    expect(ticks(-27.4, 0)).toEqual([-20, -10, 0])
  })

  it('pads the range by 8%, widens equal values, and maps columns to their centres', () => {
    const s = chartScale(frame, [0, 10], 4)
    expect([s.lo, s.hi, s.plotW, s.plotH, s.band]).toEqual([-0.8, 10.8, 100, 80, 25])
    expect([s.x(0), s.x(3), s.y(-0.8), s.y(10.8), s.y(5)]).toEqual([22.5, 97.5, 90, 10, 50])
    // All equal: half the value either way (zero: one unit), then the padding.
    expect([chartScale(frame, [4, 4], 1).lo, chartScale(frame, [4, 4], 1).hi]).toEqual([1.68, 6.32])
    expect([chartScale(frame, [], 0).lo, chartScale(frame, [], 0).hi]).toEqual([-1.16, 1.16])
  })
})
