/**
 * Wire bodies of the eval-run endpoints (contract, "Eval-run endpoints").
 * They validate requests, type the client library and generate OpenAPI.
 */
import * as v from 'valibot'
import { jsonObject, limitParam, optionalText, uuid } from '../http/fields.ts'
import { MetricBlobSchema } from './metric-blob.ts'

/** Eval-run metadata carries hashes and build links, never weights. */
export const EVAL_METADATA_LIMIT = 64 * 1024
/** Most baselines one eval run may compare against. */
export const MAX_BASELINES = 1000
/** Stored length of a failed result's error. */
export const ERROR_LIMIT = 2000

export const CreateEvalRunBody = v.strictObject(
  {
    candidate_policy_version: v.pipe(
      v.string('is required and must be a string'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(120, 'must be at most 120 characters'),
    ),
    baseline_episode_ids: v.pipe(
      v.array(v.string('must be an array of episode id strings'), 'is required and must be an array of episode ids'),
      v.minLength(1, 'must name at least one baseline episode'),
      v.maxLength(MAX_BASELINES, `must name at most ${MAX_BASELINES} baseline episodes`),
      v.check((ids) => new Set(ids.map((id) => id.toLowerCase())).size === ids.length, 'must not repeat an episode id'),
    ),
    baseline_policy_version: optionalText(120),
    name: optionalText(200),
    metadata: v.optional(jsonObject(EVAL_METADATA_LIMIT), {}),
  },
  'must be a JSON object',
)
export type CreateEvalRunInput = v.InferInput<typeof CreateEvalRunBody>

export const ResultStatusSchema = v.picklist(['pending', 'done', 'failed', 'skipped'])

export const EvalResultRow = v.object({
  baseline_episode_id: v.string(),
  status: ResultStatusSchema,
  error: v.nullable(v.string()),
  metrics: v.nullable(v.record(v.string(), v.unknown())),
  replay_episode_id: v.nullable(v.string()),
  updated_at: v.string(),
})

export const EvalRunRecord = v.object({
  eval_run_id: v.string(),
  name: v.string(),
  status: v.picklist(['pending', 'completed']),
  candidate_policy_version: v.string(),
  baseline_policy_version: v.nullable(v.string()),
  baseline_episode_ids: v.array(v.string()),
  metadata: v.record(v.string(), v.unknown()),
  runner_kind: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
  summary: v.nullable(v.record(v.string(), v.unknown())),
})

export const CreateEvalRunResponse = v.object({
  ...EvalRunRecord.entries,
  status: v.literal('pending'),
  results: v.array(v.object({ baseline_episode_id: v.string(), status: v.literal('pending') })),
})

export const EvalRunWithResults = v.object({ ...EvalRunRecord.entries, results: v.array(EvalResultRow) })

export const EvalRunList = v.object({ items: v.array(EvalRunRecord), next_cursor: v.nullable(v.string()) })

export const UploadResultBody = v.strictObject(
  {
    baseline_episode_id: uuid,
    status: v.picklist(['done', 'failed'], 'must be done or failed'),
    replay_episode_id: v.optional(v.nullable(uuid)),
    error: v.optional(v.nullable(v.string('must be a string'))),
    metrics: v.optional(v.nullable(MetricBlobSchema)),
  },
  'must be a JSON object',
)
export type UploadResultInput = v.InferInput<typeof UploadResultBody>

export const UploadResultResponse = v.object({
  eval_run_id: v.string(),
  baseline_episode_id: v.string(),
  status: v.picklist(['done', 'failed']),
  updated_at: v.string(),
})

export const FinalizeEvalRunBody = v.strictObject({}, 'must be an empty JSON object')

export const MetricSummarySchema = v.object({
  baseline: v.nullable(v.number()),
  candidate: v.nullable(v.number()),
  delta: v.nullable(v.number()),
  delta_is_better: v.nullable(v.boolean()),
})

export const RollupSummarySchema = v.object({
  success_rate: MetricSummarySchema,
  reward_mean: MetricSummarySchema,
  collision_rate: MetricSummarySchema,
  time_to_goal_s: MetricSummarySchema,
  ood_action_share: MetricSummarySchema,
  better_count: v.number(),
  metric_total: v.number(),
  recommend: v.picklist(['ship', 'hold']),
  episodes: v.object({ total: v.number(), done: v.number(), failed: v.number(), skipped: v.number(), pending: v.number() }),
})

export const FinalizeEvalRunResponse = v.object({
  eval_run_id: v.string(),
  status: v.literal('completed'),
  updated_at: v.string(),
  summary: RollupSummarySchema,
})

export const ListEvalRunsQuery = v.strictObject(
  {
    limit: limitParam,
    cursor: v.optional(v.string()),
    status: v.optional(v.picklist(['pending', 'completed'], 'must be pending or completed')),
  },
  'unknown query parameter',
)
export type ListEvalRunsInput = v.InferOutput<typeof ListEvalRunsQuery>
