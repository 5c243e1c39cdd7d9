/**
 * Puts a stored summary's keys back in the order `rollup` wrote them.
 * PostgreSQL's jsonb keeps keys sorted by length, so without this a repeated
 * finalize (or a GET) would answer the same summary with its keys shuffled,
 * and a byte-for-byte comparison of the two bodies would fail. Keys this
 * version does not know (a summary from a later version) follow in their
 * stored order.
 */
import { METRICS } from './rollup.ts'

const METRIC_KEYS = ['baseline', 'candidate', 'delta', 'delta_is_better', 'n', 'ci_low', 'ci_high', 'significant', 'method', 'p_value', 'candidate_source']
const NESTED: Record<string, string[]> = {
  candidate_source: ['reported', 'recorded'],
  episodes: ['total', 'done', 'failed', 'skipped', 'pending'],
  action_divergence: ['n', 'l2_mean', 'l2_normalized_mean', 'ood_action_share_mean', 'max_ood_action_share'],
}
const SUMMARY_KEYS = [
  ...METRICS.map((m) => m.name),
  'better_count',
  'metric_total',
  'recommend',
  'episodes',
  'verdict',
  'reasons',
  'min_episodes',
  'episodes_needed',
  'action_divergence',
]

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x)

function ordered(value: Record<string, unknown>, keys: readonly string[], child: (key: string, v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (Object.hasOwn(value, key)) out[key] = child(key, value[key])
  for (const key of Object.keys(value)) if (!Object.hasOwn(out, key)) out[key] = value[key]
  return out
}

const nested = (key: string, v: unknown) => (isObject(v) && NESTED[key] ? ordered(v, NESTED[key]!, (_k, x) => x) : v)

/** The summary with its keys in canonical order (anything that is not an object comes back as is). */
export function orderSummary<T>(summary: T): T {
  if (!isObject(summary)) return summary
  const metricNames = new Set<string>(METRICS.map((m) => m.name))
  return ordered(summary, SUMMARY_KEYS, (key, v) => (metricNames.has(key) && isObject(v) ? ordered(v, METRIC_KEYS, nested) : nested(key, v))) as T
}
