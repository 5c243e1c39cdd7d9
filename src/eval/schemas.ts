/**
 * Wire bodies of the eval-run endpoints (contract, "Eval-run endpoints").
 * They validate requests, type the client library and generate OpenAPI.
 */
import * as v from 'valibot'
import { jsonObject, limitParam, optionalText, uuid } from '../http/fields.ts'
import { typed } from '../http/typed-schema.ts'
import { MetricBlobSchema, type MetricBlob } from './metric-blob.ts'
import type { MetricSummary, ResultStatus, RollupSummary } from './rollup.ts'

/** Eval-run metadata carries hashes and build links, never weights. */
export const EVAL_METADATA_LIMIT = 64 * 1024
/** Most baselines one eval run may compare against. */
export const MAX_BASELINES = 1000
/** Stored length of a failed result's error. */
export const ERROR_LIMIT = 2000

/** Body of `POST /api/ingest/eval-run`. */
export interface CreateEvalRunInput {
  /** Required, at most 120 characters. */
  candidate_policy_version: string
  /** 1..1000 distinct ids of the caller's episodes; any other id refuses the whole request (404). */
  baseline_episode_ids: string[]
  baseline_policy_version?: string | null
  /** Falls back to the candidate version. At most 200 characters. */
  name?: string | null
  /** Hashes and build links only, at most 64 KiB as JSON; default `{}`. */
  metadata?: Record<string, unknown>
}

/** The create body after validation. */
export interface CreateEvalRunParsed extends Omit<CreateEvalRunInput, 'metadata'> {
  metadata: Record<string, unknown>
}

export const CreateEvalRunBody: v.GenericSchema<CreateEvalRunInput, CreateEvalRunParsed> = typed<CreateEvalRunInput, CreateEvalRunParsed>()(v.strictObject(
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
))

export const ResultStatusSchema: v.PicklistSchema<readonly ResultStatus[], undefined> = v.picklist(['pending', 'done', 'failed', 'skipped'])

/** One result row of an eval run: one per baseline episode. */
export interface EvalResult {
  baseline_episode_id: string
  status: ResultStatus
  /** Truncated to 2,000 characters; set when `failed`. */
  error: string | null
  metrics: Record<string, unknown> | null
  replay_episode_id: string | null
  updated_at: string
}

export const EvalResultRow: v.GenericSchema<EvalResult> = typed<EvalResult>()(v.object({
  baseline_episode_id: v.string(),
  status: ResultStatusSchema,
  error: v.nullable(v.string()),
  metrics: v.nullable(v.record(v.string(), v.unknown())),
  replay_episode_id: v.nullable(v.string()),
  updated_at: v.string(),
}))

/** An eval run without its result rows (as listed). */
export interface EvalRunInfo {
  eval_run_id: string
  name: string
  status: 'pending' | 'completed'
  candidate_policy_version: string
  baseline_policy_version: string | null
  baseline_episode_ids: string[]
  metadata: Record<string, unknown>
  runner_kind: string
  created_at: string
  updated_at: string
  /** The rollup once completed. */
  summary: Record<string, unknown> | null
}

const evalRunEntries = {
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
}

export const EvalRunRecord: v.GenericSchema<EvalRunInfo> = typed<EvalRunInfo>()(v.object(evalRunEntries))

/** `201` answer of create: the new run, every row pending. */
export interface CreatedEvalRun extends Omit<EvalRunInfo, 'status'> {
  status: 'pending'
  results: { baseline_episode_id: string; status: 'pending' }[]
}

export const CreateEvalRunResponse: v.GenericSchema<CreatedEvalRun> = typed<CreatedEvalRun>()(v.object({
  ...evalRunEntries,
  status: v.literal('pending'),
  results: v.array(v.object({ baseline_episode_id: v.string(), status: v.literal('pending') })),
}))

/** `GET /api/eval-runs/{id}`: the run with its result rows in baseline order. */
export interface EvalRunDetail extends EvalRunInfo {
  results: EvalResult[]
}

export const EvalRunWithResults: v.GenericSchema<EvalRunDetail> = typed<EvalRunDetail>()(v.object({ ...evalRunEntries, results: v.array(EvalResultRow) }))

/** One page of `GET /api/eval-runs`, newest first. */
export interface EvalRunPage {
  items: EvalRunInfo[]
  next_cursor: string | null
}

export const EvalRunList: v.GenericSchema<EvalRunPage> = typed<EvalRunPage>()(v.object({ items: v.array(EvalRunRecord), next_cursor: v.nullable(v.string()) }))

/** Body of `POST /api/ingest/eval-run/{id}/result` (a retry replaces the row). */
export interface UploadResultInput {
  baseline_episode_id: string
  status: 'done' | 'failed'
  replay_episode_id?: string | null
  /** Stored truncated to 2,000 characters. */
  error?: string | null
  metrics?: MetricBlob | null
}

export const UploadResultBody: v.GenericSchema<UploadResultInput> = typed<UploadResultInput>()(v.strictObject(
  {
    baseline_episode_id: uuid,
    status: v.picklist(['done', 'failed'], 'must be done or failed'),
    replay_episode_id: v.optional(v.nullable(uuid)),
    error: v.optional(v.nullable(v.string('must be a string'))),
    metrics: v.optional(v.nullable(MetricBlobSchema)),
  },
  'must be a JSON object',
))

/** `200` answer of the result upload. */
export interface UploadResultResult {
  eval_run_id: string
  baseline_episode_id: string
  status: 'done' | 'failed'
  updated_at: string
}

export const UploadResultResponse: v.GenericSchema<UploadResultResult> = typed<UploadResultResult>()(v.object({
  eval_run_id: v.string(),
  baseline_episode_id: v.string(),
  status: v.picklist(['done', 'failed']),
  updated_at: v.string(),
}))

/** Body of the eval-run finalize: `{}` (no field is accepted). */
export type FinalizeEvalRunInput = Record<never, never>

export const FinalizeEvalRunBody: v.GenericSchema<FinalizeEvalRunInput> = typed<FinalizeEvalRunInput>()(v.strictObject({}, 'must be an empty JSON object'))

export const MetricSummarySchema: v.GenericSchema<MetricSummary> = typed<MetricSummary>()(v.object({
  baseline: v.nullable(v.number()),
  candidate: v.nullable(v.number()),
  delta: v.nullable(v.number()),
  delta_is_better: v.nullable(v.boolean()),
}))

export const RollupSummarySchema: v.GenericSchema<RollupSummary> = typed<RollupSummary>()(v.object({
  success_rate: MetricSummarySchema,
  reward_mean: MetricSummarySchema,
  collision_rate: MetricSummarySchema,
  time_to_goal_s: MetricSummarySchema,
  ood_action_share: MetricSummarySchema,
  better_count: v.number(),
  metric_total: v.number(),
  recommend: v.picklist(['ship', 'hold']),
  episodes: v.object({ total: v.number(), done: v.number(), failed: v.number(), skipped: v.number(), pending: v.number() }),
}))

/** `200` answer of the eval-run finalize (the same body on every repeat). */
export interface FinalizedEvalRun {
  eval_run_id: string
  status: 'completed'
  updated_at: string
  summary: RollupSummary
}

export const FinalizeEvalRunResponse: v.GenericSchema<FinalizedEvalRun> = typed<FinalizedEvalRun>()(v.object({
  eval_run_id: v.string(),
  status: v.literal('completed'),
  updated_at: v.string(),
  summary: RollupSummarySchema,
}))

/** Query of `GET /api/eval-runs` as sent. */
export interface ListEvalRunsParams {
  /** 1..200, default 50. */
  limit?: string
  cursor?: string
  status?: 'pending' | 'completed'
}

/** The eval-run list query after validation. */
export interface ListEvalRunsInput extends Omit<ListEvalRunsParams, 'limit'> {
  limit: number
}

export const ListEvalRunsQuery: v.GenericSchema<ListEvalRunsParams, ListEvalRunsInput> = typed<ListEvalRunsParams, ListEvalRunsInput>()(v.strictObject(
  {
    limit: limitParam,
    cursor: v.optional(v.string()),
    status: v.optional(v.picklist(['pending', 'completed'], 'must be pending or completed')),
  },
  'unknown query parameter',
))
