import { describe, expect, it } from 'vitest'
import type { MetricSummary } from '../eval/rollup.ts'
import { ActionDivergence, ErrorBar, mark, meanByKey, RollupTable, Verdict } from './rollup.tsx'

const metric = (over: Partial<MetricSummary>): MetricSummary => ({
  baseline: 10,
  candidate: 12,
  delta: 2,
  delta_is_better: true,
  n: 12,
  ci_low: 1,
  ci_high: 3,
  significant: true,
  method: 'bootstrap_paired',
  p_value: null,
  candidate_source: { reported: 9, recorded: 3 },
  ...over,
})

describe('portal rollup', () => {
  it('marks better or worse only when the interval excludes zero', () => {
    expect(mark(metric({})).text).toBe('✓ better')
    expect(mark(metric({ delta: -2, delta_is_better: false, ci_low: -3, ci_high: -1 })).text).toBe('✗ worse')
    expect(mark(metric({ ci_low: -1, significant: false })).text).toBe('~ no clear change')
    expect(mark(metric({ delta: 0, delta_is_better: false, ci_low: 0, ci_high: 0, significant: false })).text).toBe('= unchanged')
    expect(mark(metric({ delta: null, delta_is_better: null })).text).toBe('n/a')
  })

  it('draws the interval as an error bar around the delta, on a scale symmetric around zero', () => {
    const svg = String(ErrorBar({ m: metric({ ci_low: -1, ci_high: 3, significant: false }), name: 'reward_mean' }))
    expect(svg).toContain('<line class="zero" x1="60" x2="60"')
    // reach 3: -1 -> 60 - 18 = 42, 3 -> 114, the delta 2 -> 96
    expect(svg).toContain('<line class="bar" x1="42" x2="114"')
    expect(svg).toContain('<circle class="point" cx="96"')
    expect(svg).toContain('95% interval -1 to +3 (paired bootstrap)')
    expect(ErrorBar({ m: metric({ ci_low: null, ci_high: null }), name: 'reward_mean' })).toBeNull()
  })

  it('shows n, the interval and where the candidate values came from', () => {
    const html = String(
      RollupTable({
        summary: {
          reward_mean: metric({}),
          success_rate: metric({ method: 'newcombe_paired', baseline: 0.5, candidate: 0.75, delta: 0.25, ci_low: 0.05, ci_high: 0.4 }),
        },
      }),
    )
    expect(html).toContain('reported by the policy in 9 of 12 episodes')
    expect(html).toMatch(/data-metric="reward_mean">.*?data-label="n">12</s)
    expect(html).toContain('+5 pp … +40 pp')
    expect(html).toContain('+1 … +3')
  })

  it('shows the verdict, its reasons and the open-loop caveat; per-key action divergence from the rows', () => {
    const summary = {
      verdict: 'inconclusive',
      recommend: 'hold',
      reasons: ['Only 4 episodes done; ship needs at least 10 (min_episodes).'],
      better_count: 1,
      metric_total: 2,
      min_episodes: 10,
      episodes_needed: 31,
    }
    const html = String(Verdict({ summary }))
    expect(html).toContain('id="verdict">INCONCLUSIVE<')
    expect(html).toContain('id="recommendation">HOLD<')
    expect(html).toContain('<li>Only 4 episodes done; ship needs at least 10 (min_episodes).</li>')
    expect(html).toContain('about 31 paired episodes would settle it')
    expect(html).toContain('Replay is open-loop')
    const rows = [
      { status: 'done', metrics: { action_l2_by_key: { '/b': 1, '/a': 0.5 } } },
      { status: 'done', metrics: { action_l2_by_key: { '/a': 1.5, '/b': null } } },
      { status: 'failed', metrics: { action_l2_by_key: { '/a': 100 } } },
    ]
    expect(meanByKey(rows)).toEqual([{ key: '/a', mean: 1, n: 2 }, { key: '/b', mean: 1, n: 1 }])
    const divergence = String(
      ActionDivergence({
        summary: { action_divergence: { n: 2, l2_mean: 0.4, l2_normalized_mean: 0.1, ood_action_share_mean: 0.3, max_ood_action_share: 0.25 } },
        rows,
      }),
    )
    expect(divergence).toContain('<dd class="worse">30% (limit 25%)</dd>')
    expect(divergence).toContain('<tr data-key="/a"><td><code>/a</code></td><td class="num">1</td><td class="num">2</td></tr>')
  })
})
