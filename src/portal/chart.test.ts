import { describe, expect, it } from 'vitest'
import { METRICS } from '../eval/rollup.ts'
import { chartPoints, chartValue, ResultChart } from './chart.tsx'
import { formatDelta, formatDuration, formatMetric, formatNumber, verdict } from './format.ts'

const reward = METRICS.find((m) => m.column === 'reward_total')!
const collisions = METRICS.find((m) => m.column === 'collision_count')!

describe('chart', () => {
  it('reads metric values: booleans as 1/0, non-numbers as absent', () => {
    expect([true, false, 2.5, null, undefined, 'x', Number.NaN].map(chartValue)).toEqual([1, 0, 2.5, null, null, null, null])
  })

  it('keeps rows with at least one value of the column, in order', () => {
    const rows = [
      { label: 'a', metrics: { reward_total_baseline: 1, reward_total_candidate: 2 } },
      { label: 'b', metrics: null },
      { label: 'c', metrics: { steps: 3 } },
      { label: 'd', metrics: { reward_total_candidate: 4 } },
    ]
    expect(chartPoints(rows, 'reward_total')).toEqual([
      { row: 1, label: 'a', baseline: 1, candidate: 2 },
      { row: 4, label: 'd', baseline: null, candidate: 4 },
    ])
  })

  it('draws one column per episode, coloured by which way is better', () => {
    const points = [
      { row: 1, label: 'a', baseline: 1, candidate: 2 },
      { row: 2, label: '<b>', baseline: 3, candidate: 1 },
      { row: 4, label: 'c', baseline: 2, candidate: 2 },
    ]
    const svg = String(ResultChart({ points, spec: reward, column: 'reward_total' }))
    expect(svg.match(/<g class="episode">/g)).toHaveLength(3)
    expect(svg).toContain('class="up"')
    expect(svg).toContain('class="down"')
    expect(svg).toContain('#2 &lt;b&gt;: baseline 3, candidate 1')
    const lower = String(ResultChart({ points, spec: collisions, column: 'collision_count' }))
    expect(lower.indexOf('class="down"')).toBeLessThan(lower.indexOf('class="up"')) // fewer collisions is better
  })

  it('keeps the baseline visible when the candidate equals it, and marks failed episodes', () => {
    const rows = [
      { label: 'a', status: 'done', metrics: { reward_total_baseline: 2, reward_total_candidate: 2 } },
      { label: 'b', status: 'failed', metrics: null },
    ]
    const points = chartPoints(rows, 'reward_total')
    expect(points).toEqual([
      { row: 1, label: 'a', baseline: 2, candidate: 2 },
      { row: 2, label: 'b', baseline: null, candidate: null, failed: true },
    ])
    const svg = String(ResultChart({ points, spec: reward, column: 'reward_total' }))
    // Hollow candidate square first, then the baseline dot on top of it.
    expect(svg.indexOf('class="candidate hollow"')).toBeLessThan(svg.indexOf('class="baseline"'))
    expect(svg).toContain('#1 a: baseline 2, candidate 2 (unchanged)')
    expect(svg).toContain('<g class="episode failed"><title>#2 b: failed (no values)</title><path class="failed-mark"')
    const onlyFailed = String(ResultChart({ points: [points[1]!], spec: reward, column: 'reward_total' }))
    expect(onlyFailed).not.toContain('NaN')
  })

  it('copes with a single value and with many episodes', () => {
    expect(String(ResultChart({ points: [{ row: 1, label: 'a', baseline: 0, candidate: 0 }], spec: reward, column: 'reward_total' }))).not.toContain('NaN')
    const many = Array.from({ length: 1000 }, (_, i) => ({ row: i + 1, label: `e${i}`, baseline: i, candidate: i + 1 }))
    const svg = String(ResultChart({ points: many, spec: reward, column: 'reward_total' }))
    expect(svg).not.toContain('NaN')
    expect(svg.match(/text-anchor="middle"/g)!.length).toBeLessThanOrEqual(13)
  })
})

describe('format', () => {
  const rest = {
    n: 1,
    ci_low: null,
    ci_high: null,
    significant: null,
    method: 'bootstrap_paired',
    p_value: null,
    candidate_source: { reported: 0, recorded: 1 },
  } as const
  it('prints numbers, shares, deltas and verdicts', () => {
    expect([formatNumber(3), formatNumber(2.34567), formatNumber(1234.56), formatNumber(null)]).toEqual(['3', '2.346', '1234.6', '—'])
    expect(formatMetric('success_rate', 0.75)).toBe('75%')
    expect(formatDelta('collision_rate', -0.5)).toBe('-50 pp')
    expect(formatDelta('reward_mean', 2)).toBe('+2')
    expect(formatDelta('reward_mean', 0)).toBe('0')
    expect(verdict({ ...rest, baseline: 1, candidate: 1, delta: 0, delta_is_better: false }).text).toBe('= unchanged')
    expect(verdict({ ...rest, baseline: 1, candidate: 0, delta: -1, delta_is_better: false }).className).toBe('worse')
    expect(verdict({ ...rest, baseline: null, candidate: 0, delta: null, delta_is_better: null }).text).toBe('n/a')
    expect([formatDuration(42.5), formatDuration(119.7), formatDuration(3725)]).toEqual(['42.5 s', '1 min 59 s', '1 h 02 min'])
  })
})
