import { withoutStack } from './errors.ts'

/**
 * Episode outcomes: the four values the rollup compares besides the action
 * metrics. The baseline's come from its episode metadata (`success`,
 * `reward_total`, `collision_count`, `time_to_goal_s`); the candidate's from
 * the `_outcome` sentinel a policy may return on the last step, each missing
 * key falling back to the baseline value (delta 0).
 */
export interface Outcome {
  /** Whether the episode reached its goal; null when unknown. */
  success: boolean | null
  /** The summed reward; null when unknown. */
  reward_total: number | null
  /** How many collisions happened; null when unknown. */
  collision_count: number | null
  /** Seconds until the goal was reached; null when unknown or never reached. */
  time_to_goal_s: number | null
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x)

/** The baseline outcome from episode metadata; values of the wrong type count as absent. */
export function baselineOutcome(metadata: Record<string, unknown>): Outcome {
  const { success, reward_total, collision_count, time_to_goal_s } = metadata
  return {
    success: typeof success === 'boolean' ? success : null,
    reward_total: isNumber(reward_total) ? reward_total : null,
    collision_count: isNumber(collision_count) && Number.isInteger(collision_count) && collision_count >= 0 ? collision_count : null,
    time_to_goal_s: isNumber(time_to_goal_s) && time_to_goal_s >= 0 ? time_to_goal_s : null,
  }
}

/**
 * The candidate outcome: `_outcome` values where given, else the baseline's.
 * Throws (failing the episode) when `_outcome` is not an object or a value
 * has the wrong type, naming the key.
 */
export function candidateOutcome(sentinel: unknown, baseline: Outcome): Outcome {
  if (sentinel === undefined) return { ...baseline }
  if (sentinel === null || typeof sentinel !== 'object' || Array.isArray(sentinel)) {
    throw withoutStack(new TypeError('_outcome must be an object with optional success, reward_total, collision_count, time_to_goal_s'))
  }
  const given = sentinel as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!['success', 'reward_total', 'collision_count', 'time_to_goal_s'].includes(key)) throw withoutStack(new TypeError(`_outcome.${key}: unknown key`))
  }
  const pick = <K extends keyof Outcome>(key: K, ok: (x: unknown) => boolean, rule: string): Outcome[K] => {
    if (given[key] === undefined) return baseline[key]
    if (!ok(given[key])) throw withoutStack(new TypeError(`_outcome.${key}: must be ${rule}`))
    return given[key] as Outcome[K]
  }
  return {
    success: pick('success', (x) => typeof x === 'boolean', 'a boolean'),
    reward_total: pick('reward_total', isNumber, 'a finite number'),
    collision_count: pick('collision_count', (x) => isNumber(x) && Number.isInteger(x) && x >= 0, 'an integer >= 0'),
    time_to_goal_s: pick('time_to_goal_s', (x) => isNumber(x) && x >= 0, 'a number >= 0'),
  }
}

/** Where each candidate outcome value came from: `reported` through `_outcome`, or `recorded` (the baseline's). */
export type OutcomeSource = Record<keyof Outcome, 'reported' | 'recorded'>

/**
 * Labels each candidate outcome value (contract, "Metric blob additions"):
 * `reported` when `_outcome` supplied it, `recorded` when it fell back to the
 * baseline. Call it after `candidateOutcome` accepted the sentinel.
 *
 * @example
 * outcomeSource({ success: true }) // { success: 'reported', reward_total: 'recorded', ... }
 */
export function outcomeSource(sentinel: unknown): OutcomeSource {
  const given = (sentinel ?? {}) as Record<string, unknown>
  const label = (key: keyof Outcome) => (given[key] === undefined ? 'recorded' : 'reported')
  return { success: label('success'), reward_total: label('reward_total'), collision_count: label('collision_count'), time_to_goal_s: label('time_to_goal_s') }
}
