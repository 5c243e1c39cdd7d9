import { describe, expect, it } from 'vitest'
import { rollup } from './rollup.ts'
import { orderSummary } from './summary-order.ts'

/** What jsonb hands back: keys sorted by length, then bytewise, at every depth. */
function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder)
  if (value === null || typeof value !== 'object') return value
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder((value as Record<string, unknown>)[k])]))
}

describe('orderSummary', () => {
  it('restores the rollup key order of a summary read back from jsonb, byte for byte', () => {
    const summary = rollup(
      Array.from(
        { length: 12 },
        (_, i) => ({
          status: 'done' as const,
          metrics: { reward_total_baseline: i, reward_total_candidate: i + 1, outcome_source: { reward_total: 'reported' as const } },
        }),
      ),
      { seed: 'order' },
    )
    const shuffled = jsonbOrder(JSON.parse(JSON.stringify(summary)))
    expect(JSON.stringify(shuffled)).not.toBe(JSON.stringify(summary))
    expect(JSON.stringify(orderSummary(shuffled))).toBe(JSON.stringify(summary))
  })

  it('keeps unknown keys after the known ones and leaves non-objects alone', () => {
    expect(Object.keys(orderSummary({ zeta: 1, recommend: 'hold', better_count: 0 }) as object)).toEqual(['better_count', 'recommend', 'zeta'])
    expect(orderSummary(null)).toBeNull()
  })
})
