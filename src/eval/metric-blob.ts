import * as v from 'valibot'
import { objectOnly } from '../http/fields.ts'
import { typed } from '../http/typed-schema.ts'

/** Plain JSON data; an integer past 2^53 is a `bigint`, so it keeps every digit (see http/json.ts). */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue }

const MUST = {
  count: 'must be an integer >= 0',
  countOrNull: 'must be an integer >= 0 or null',
  boolean: 'must be a boolean or null',
  number: 'must be a finite number or null',
  nonNegative: 'must be a number >= 0 or null',
  share: 'must be a number in [0, 1] or null',
  json: 'must be a JSON value',
  byKey: 'must be an object of action key -> number >= 0 or null',
  source: 'must be an object of success, reward_total, collision_count, time_to_goal_s -> "reported" or "recorded"',
} as const

const sourceLabel = v.picklist(['reported', 'recorded'], MUST.source)

/** Where each candidate outcome value came from (contract, "Metric blob additions"). */
export interface MetricOutcomeSource {
  /** Source of `success_candidate`. */
  success?: 'reported' | 'recorded'
  /** Source of `reward_total_candidate`. */
  reward_total?: 'reported' | 'recorded'
  /** Source of `collision_count_candidate`. */
  collision_count?: 'reported' | 'recorded'
  /** Source of `time_to_goal_s_candidate`. */
  time_to_goal_s?: 'reported' | 'recorded'
}

/** An absent column means null; `optional(nullable(...))` accepts both spellings. */
const orNull = <T extends v.GenericSchema>(schema: T) => v.optional(v.nullable(schema))

const finite = (message: string) => v.pipe(v.number(message), v.finite(message))

const count = (message: string) => v.pipe(v.number(message), v.integer(message), v.minValue(0, message))

const nonNegative = (message: string) => v.pipe(finite(message), v.minValue(0, message))

const share = v.pipe(finite(MUST.share), v.minValue(0, MUST.share), v.maxValue(1, MUST.share))

/**
 * Whether `value` is plain JSON data: null, booleans, strings, finite numbers
 * (bigints past 2^53), arrays and plain objects of those. The walk is iterative so a deeply nested
 * extra column is refused or accepted, never a stack overflow (a 500). A
 * container reached twice (shared or cyclic) is refused; `JSON.parse` never
 * builds one.
 */
export function isJsonValue(value: unknown): value is JsonValue {
  const seen = new Set<object>()
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (item === null || typeof item === 'boolean' || typeof item === 'string' || typeof item === 'bigint') continue
    if (typeof item === 'number') {
      if (Number.isFinite(item)) continue
      return false
    }
    if (typeof item !== 'object' || seen.has(item)) return false
    seen.add(item)
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) stack.push(item[i])
      continue
    }
    const proto = Object.getPrototypeOf(item)
    if (proto !== Object.prototype && proto !== null) return false
    for (const key of Object.keys(item)) stack.push((item as Record<string, unknown>)[key])
  }
  return true
}

/**
 * The per-episode metric blob uploaded with an eval result (contract, "Metric
 * blob"). Every column is optional and an absent column reads as null. Unknown
 * extra columns are kept as given as long as they are JSON data (`__proto__`,
 * `constructor` and `prototype` keys are dropped by valibot).
 *
 * Each issue's message names the rule and `issue.path` names the column, so
 * `formatMetricIssues` (or the HTTP layer) prints
 * `metrics.collision_count_candidate: must be an integer >= 0 or null`.
 *
 * For JSON Schema / OpenAPI generation pass `ignoreActions: ['check', 'finite']`:
 * JSON has no infinities anyway, and the extra columns convert to `{}` (any
 * JSON value), which is what they are.
 *
 * @example
 * const parsed = v.safeParse(MetricBlobSchema, body.metrics)
 * if (!parsed.success) throw new EpisodicError('invalid', formatMetricIssues(parsed.issues)[0])
 */
const MetricColumns = v.objectWithRest(
  {
    steps: v.optional(count(MUST.count)),
    success_baseline: orNull(v.boolean(MUST.boolean)),
    success_candidate: orNull(v.boolean(MUST.boolean)),
    reward_total_baseline: orNull(finite(MUST.number)),
    reward_total_candidate: orNull(finite(MUST.number)),
    collision_count_baseline: orNull(count(MUST.countOrNull)),
    collision_count_candidate: orNull(count(MUST.countOrNull)),
    time_to_goal_s_baseline: orNull(nonNegative(MUST.nonNegative)),
    time_to_goal_s_candidate: orNull(nonNegative(MUST.nonNegative)),
    action_l2_mean: orNull(nonNegative(MUST.nonNegative)),
    ood_action_share_baseline: orNull(share),
    ood_action_share_candidate: orNull(share),
    action_l2_normalized_mean: orNull(nonNegative(MUST.nonNegative)),
    action_l2_by_key: orNull(objectOnly(v.record(v.string(MUST.byKey), v.nullable(nonNegative(MUST.byKey)), MUST.byKey), MUST.byKey)),
    nonfinite_steps: v.optional(count(MUST.count)),
    // objectOnly: a strict object schema alone takes `[]` as an object with no keys.
    outcome_source: orNull(
      objectOnly(
        v.strictObject(
          {
            success: v.optional(sourceLabel),
            reward_total: v.optional(sourceLabel),
            collision_count: v.optional(sourceLabel),
            time_to_goal_s: v.optional(sourceLabel),
          },
          MUST.source,
        ),
        MUST.source,
      ),
    ),
  },
  v.pipe(v.unknown(), v.check(isJsonValue, MUST.json)),
  'must be an object',
)

/** A validated metric blob: the known columns typed, extra columns as given (contract, "Metric blob"). */
export interface MetricBlob {
  /** Integer >= 0. */
  steps?: number
  /** Whether the recorded (baseline) episode reached its goal. */
  success_baseline?: boolean | null
  /** Whether the candidate's replay reached its goal. */
  success_candidate?: boolean | null
  /** Total reward of the recorded episode. */
  reward_total_baseline?: number | null
  /** Total reward of the candidate's replay. */
  reward_total_candidate?: number | null
  /** Integer >= 0. */
  collision_count_baseline?: number | null
  /** Integer >= 0. */
  collision_count_candidate?: number | null
  /** >= 0. */
  time_to_goal_s_baseline?: number | null
  /** >= 0. */
  time_to_goal_s_candidate?: number | null
  /** Mean over steps of the Euclidean norm of (candidate - baseline) actions; >= 0. */
  action_l2_mean?: number | null
  /** In [0, 1]. */
  ood_action_share_baseline?: number | null
  /** In [0, 1]: share of steps with a candidate component outside the baseline's range. */
  ood_action_share_candidate?: number | null
  /** Like `action_l2_mean`, each component divided by the baseline's range of it over the episode (zero range: 1); >= 0. */
  action_l2_normalized_mean?: number | null
  /** Action key -> mean Euclidean norm of (candidate - baseline) at that key. */
  action_l2_by_key?: Record<string, number | null> | null
  /** Steps whose non-finite components were left out of the action metrics; integer >= 0. */
  nonfinite_steps?: number
  /** Where each candidate outcome value came from: `reported` by the policy through `_outcome`, or `recorded` (the baseline's). */
  outcome_source?: MetricOutcomeSource | null
  /** Extra columns: any JSON value, kept as given. */
  [column: string]: unknown
}

/** The blob: a JSON object (valibot's object schemas alone would take an array). */
export const MetricBlobSchema: v.GenericSchema<MetricBlob> = typed<MetricBlob>()(objectOnly(MetricColumns))

/**
 * One line per issue, `<prefix>.<column>: <message>` (the prefix alone for an
 * issue on the blob itself, e.g. when it is not an object). Repeated lines are
 * dropped: `-1.5` fails both the integer and the minimum check of a count.
 *
 * @example
 * formatMetricIssues(v.safeParse(MetricBlobSchema, { steps: -1 }).issues ?? [])
 * // ['metrics.steps: must be an integer >= 0']
 */
export function formatMetricIssues(issues: ReadonlyArray<v.BaseIssue<unknown>>, prefix = 'metrics'): string[] {
  const lines = issues.map((issue) => {
    const path = v.getDotPath(issue)
    return `${path ? `${prefix}.${path}` : prefix}: ${issue.message}`
  })
  return [...new Set(lines)]
}
