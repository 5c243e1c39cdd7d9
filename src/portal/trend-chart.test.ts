import { describe, expect, it } from 'vitest'
import { METRICS } from '../eval/rollup.ts'
import { TrendChart, trendPoint } from './trend-chart.tsx'

const spec = METRICS.find((m) => m.name === 'reward_mean')!
const run = (name: string, metric: Record<string, unknown> | null) => ({
  name,
  created_at: '2026-05-01T12:00:00.000Z',
  candidate_policy_version: `cand-${name}`,
  summary: metric ? { reward_mean: metric } : null,
})

describe('trend chart', () => {
  it('reads a metric and its interval from a stored summary', () => {
    expect(trendPoint(run('a', { baseline: 1, candidate: 3, delta: 2, ci_low: 0.5, ci_high: 3.5 }), spec, '/r/a')).toMatchObject({
      delta: 2,
      ci_low: 0.5,
      ci_high: 3.5,
      label: 'cand-a',
      href: '/r/a',
    })
    expect(trendPoint(run('b', { baseline: 1, candidate: 3, delta: 2 }), spec, '/r/b')).toMatchObject({ delta: 2, ci_low: null, ci_high: null })
    expect(trendPoint(run('c', null), spec, '/r/c')).toMatchObject({ delta: null, baseline: null })
  })

  it('links every point to its run and draws an interval where the summary has one', async () => {
    const points = [
      trendPoint(run('a', { baseline: 1, candidate: 3, delta: 2, ci_low: 0.5, ci_high: 3.5 }), spec, '/portal/eval-runs/a'),
      trendPoint(run('b', { baseline: 1, candidate: 0, delta: -1 }), spec, '/portal/eval-runs/b'),
    ]
    const svg = String(await TrendChart({ spec, points }))
    expect([...svg.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1])).toEqual(['/portal/eval-runs/a', '/portal/eval-runs/b'])
    expect(svg.match(/<g class="ci">/g)?.length).toBe(1)
    expect(svg).toContain('95% interval [+0.5, +3.5]')
    expect(svg).toContain('delta -1, no interval')
    expect(svg).toContain('class="candidate up"')
    expect(svg).toContain('class="candidate down"')
    expect(svg).toContain('<polyline class="trendline"')
  })

  it('writes large ticks short enough for the margin at a phone width (-100M, not -100000000)', async () => {
    const points = [
      trendPoint(run('a', { baseline: 0, candidate: -123456789, delta: -123456789 }), spec, '/r/a'),
      trendPoint(run('b', { baseline: 0, candidate: 2e7, delta: 2e7 }), spec, '/r/b'),
    ]
    const svg = String(await TrendChart({ spec, points }))
    const ticks = [...svg.matchAll(/<text x="\d+(?:\.\d+)?" y="[^"]+" dy="0.35em" text-anchor="end">([^<]+)<\/text>/g)].map((m) => m[1]!)
    expect(ticks.length).toBeGreaterThan(2)
    expect(ticks).toContain('-100M')
    for (const tick of ticks) expect(tick.length, tick).toBeLessThanOrEqual(6)
    // Each point's link names its values in words, for the keyboard and screen readers.
    expect(svg).toMatch(/<a href="\/r\/a" aria-label="a \([^)]+\): 0 → -123456789, delta -123456789, no interval">/)
  })
})
