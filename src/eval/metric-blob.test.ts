import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { formatMetricIssues, isJsonValue, MetricBlobSchema } from './metric-blob.ts'

const check = (input: unknown) => {
  const result = v.safeParse(MetricBlobSchema, input)
  return result.success ? { ok: true as const, output: result.output } : { ok: false as const, lines: formatMetricIssues(result.issues) }
}

const full = {
  steps: 120,
  success_baseline: true,
  success_candidate: false,
  reward_total_baseline: -3.5,
  reward_total_candidate: 12,
  collision_count_baseline: 0,
  collision_count_candidate: 2,
  time_to_goal_s_baseline: 0,
  time_to_goal_s_candidate: 14.2,
  action_l2_mean: 0.31,
  ood_action_share_baseline: null,
  ood_action_share_candidate: 1,
}

describe('MetricBlobSchema', () => {
  it('accepts a full blob unchanged', () => {
    expect(check(full)).toEqual({ ok: true, output: full })
  })

  it('accepts and checks the 0.2 action evidence and provenance columns', () => {
    const added = {
      ...full,
      action_l2_normalized_mean: 0.12,
      action_l2_by_key: { '/arm': 0.3, '/gripper': null },
      nonfinite_steps: 4,
      outcome_source: { success: 'reported', reward_total: 'recorded', collision_count: 'recorded', time_to_goal_s: 'reported' },
    }
    expect(check(added)).toEqual({ ok: true, output: added })
    expect(check({ action_l2_normalized_mean: -1 }).lines).toEqual(['metrics.action_l2_normalized_mean: must be a number >= 0 or null'])
    expect(check({ action_l2_by_key: { '/arm': -0.1 } }).lines).toEqual([
      'metrics.action_l2_by_key./arm: must be an object of action key -> number >= 0 or null',
    ])
    expect(check({ action_l2_by_key: [1] }).ok).toBe(false)
    expect(check({ nonfinite_steps: 1.5 }).lines).toEqual(['metrics.nonfinite_steps: must be an integer >= 0'])
    expect(check({ outcome_source: { success: 'guessed' } }).lines![0]).toMatch(/^metrics\.outcome_source\.success: must be an object of success, reward_total/)
    expect(check({ outcome_source: { speed: 'reported' } }).lines![0]).toMatch(/^metrics\.outcome_source/)
    // An array is not an object with no keys: it used to be stored as {}.
    expect(check({ outcome_source: [] }).lines).toEqual([
      'metrics.outcome_source: must be an object of success, reward_total, collision_count, time_to_goal_s -> "reported" or "recorded"',
    ])
  })

  it('accepts an empty blob and explicit nulls (absent = null)', () => {
    expect(check({}).ok).toBe(true)
    const nulls = Object.fromEntries(Object.keys(full).filter((k) => k !== 'steps').map((k) => [k, null]))
    expect(check(nulls)).toEqual({ ok: true, output: nulls })
  })

  it.each([
    ['steps', -1, 'must be an integer >= 0'],
    ['steps', 1.5, 'must be an integer >= 0'],
    ['steps', null, 'must be an integer >= 0'],
    ['success_baseline', 1, 'must be a boolean or null'],
    ['success_candidate', 'true', 'must be a boolean or null'],
    ['reward_total_baseline', '3', 'must be a finite number or null'],
    ['reward_total_candidate', Infinity, 'must be a finite number or null'],
    ['reward_total_candidate', Number.NaN, 'must be a finite number or null'],
    ['collision_count_baseline', -1, 'must be an integer >= 0 or null'],
    ['collision_count_candidate', 0.5, 'must be an integer >= 0 or null'],
    ['time_to_goal_s_baseline', -0.1, 'must be a number >= 0 or null'],
    ['time_to_goal_s_candidate', false, 'must be a number >= 0 or null'],
    ['action_l2_mean', -2, 'must be a number >= 0 or null'],
    ['ood_action_share_baseline', 1.01, 'must be a number in [0, 1] or null'],
    ['ood_action_share_candidate', -0.01, 'must be a number in [0, 1] or null'],
  ])('refuses %s = %s and names the column', (column, value, message) => {
    const result = check({ ...full, [column]: value })
    expect(result).toEqual({ ok: false, lines: [`metrics.${column}: ${message}`] })
  })

  it('reports every bad column, each by name', () => {
    const result = check({ steps: 'x', collision_count_candidate: -3 })
    expect(result).toEqual({
      ok: false,
      lines: ['metrics.steps: must be an integer >= 0', 'metrics.collision_count_candidate: must be an integer >= 0 or null'],
    })
  })

  it('refuses a blob that is not an object', () => {
    for (const input of [null, 3, 'x', undefined]) expect(check(input)).toEqual({ ok: false, lines: ['metrics: must be an object'] })
  })

  it('keeps unknown extra columns as given', () => {
    const extra = { policy_hash: 'abc', per_key_l2: { arm: [0.1, 0.2] }, note: null, n: 3 }
    expect(check({ ...full, ...extra })).toEqual({ ok: true, output: { ...full, ...extra } })
  })

  it('validates a deeply nested extra column without a stack overflow', () => {
    const deep = JSON.parse('{"tree": ' + '['.repeat(100_000) + ']'.repeat(100_000) + '}')
    expect(check(deep).ok).toBe(true)
  })

  it('refuses extra columns that are not JSON data, naming them', () => {
    expect(check({ callback: () => 1 })).toEqual({ ok: false, lines: ['metrics.callback: must be a JSON value'] })
    expect(check({ nested: { at: [new Date(0)] } })).toEqual({ ok: false, lines: ['metrics.nested: must be a JSON value'] })
  })

  it('drops a __proto__ key instead of changing the prototype', () => {
    const result = check(JSON.parse('{"__proto__": {"polluted": true}, "steps": 1}'))
    expect(result.ok && Object.getPrototypeOf(result.output)).toBe(Object.prototype)
    expect(result.ok && result.output).toEqual({ steps: 1 })
  })
})

describe('isJsonValue', () => {
  it('walks deep nesting without overflowing the stack', () => {
    const deep = JSON.parse('['.repeat(200_000) + ']'.repeat(200_000))
    expect(isJsonValue(deep)).toBe(true)
  })

  it('refuses cycles, non-finite numbers, undefined and class instances', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    for (const bad of [cyclic, [Infinity], { a: undefined }, new Map()]) expect(isJsonValue(bad)).toBe(false)
  })

  it('takes a bigint (an integer past 2^53 from the lossless body reader)', () => {
    expect(isJsonValue({ ns: [1732560000123456789n] })).toBe(true)
  })
})
