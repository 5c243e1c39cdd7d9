/**
 * Wire bodies of the eval-run endpoints (contract, "Eval-run endpoints").
 * They validate requests, type the client library and generate OpenAPI.
 */
import * as v from 'valibot'
import { distinct, idString, jsonObject, limitParam, maxCodePoints, optionalText, text, wireCount } from '../http/fields.ts'
import { instantParam } from '../http/time-param.ts'
import { typed } from '../http/typed-schema.ts'
import { type MetricBlob, MetricBlobSchema } from './metric-blob.ts'
import type { ActionDivergence, MetricSummary, ResultStatus, RollupSummary } from './rollup.ts'
import { DEFAULT_MAX_OOD_ACTION_SHARE, DEFAULT_MIN_EPISODES } from './rollup.ts'

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
  /** Policy version the baselines were recorded with, at most 120 characters; lets runs be grouped by lineage. */
  baseline_policy_version?: string | null
  /** Falls back to the candidate version. At most 200 characters. */
  name?: string | null
  /** Hashes and build links only, at most 64 KiB as JSON; default `{}`. */
  metadata?: Record<string, unknown>
  /** Done episodes needed for a `ship` verdict: an integer 1..10000, default 10. */
  min_episodes?: number
  /** Mean OOD action share above which the verdict is `hold`: 0..1, default 0.25. */
  max_ood_action_share?: number
}

/** The create body after validation. */
export interface CreateEvalRunParsed extends Omit<CreateEvalRunInput, 'metadata' | 'min_episodes' | 'max_ood_action_share'> {
  /** The metadata object, `{}` when left out. */
  metadata: Record<string, unknown>
  /** Done episodes needed for `ship`, 10 when left out. */
  min_episodes: number
  /** OOD action-share threshold for `hold`, 0.25 when left out. */
  max_ood_action_share: number
}

const MIN_EPISODES_RULE = 'must be an integer from 1 to 10000'
const MAX_OOD_RULE = 'must be a number from 0 to 1'

/** `min_episodes`: done episodes `ship` needs (the CLI's `--min-episodes` checks with it too). */
export const MinEpisodesSchema: v.GenericSchema<number> = v.pipe(
  v.number(MIN_EPISODES_RULE),
  v.integer(MIN_EPISODES_RULE),
  v.minValue(1, MIN_EPISODES_RULE),
  v.maxValue(10000, MIN_EPISODES_RULE),
)

/** `max_ood_action_share`: the OOD share above which the verdict is `hold` (the CLI's `--max-ood-share` too). */
export const MaxOodActionShareSchema: v.GenericSchema<number> = v.pipe(
  v.number(MAX_OOD_RULE),
  v.finite(MAX_OOD_RULE),
  v.minValue(0, MAX_OOD_RULE),
  v.maxValue(1, MAX_OOD_RULE),
)

export const CreateEvalRunBody: v.GenericSchema<CreateEvalRunInput, CreateEvalRunParsed> = typed<CreateEvalRunInput, CreateEvalRunParsed>()(v.strictObject(
  {
    candidate_policy_version: v.pipe(
      v.string('is required and must be a string'),
      v.minLength(1, 'must not be empty'),
      maxCodePoints(120),
    ),
    baseline_episode_ids: v.pipe(
      v.array(v.string('must be an array of episode id strings'), 'is required and must be an array of episode ids'),
      v.minLength(1, 'must name at least one baseline episode'),
      v.maxLength(MAX_BASELINES, `must name at most ${MAX_BASELINES} baseline episodes`),
      distinct<string>('must not repeat an episode id', (id) => id.toLowerCase()),
    ),
    baseline_policy_version: optionalText(120),
    name: optionalText(200),
    metadata: v.optional(jsonObject(EVAL_METADATA_LIMIT), {}),
    min_episodes: v.optional(MinEpisodesSchema, DEFAULT_MIN_EPISODES),
    max_ood_action_share: v.optional(MaxOodActionShareSchema, DEFAULT_MAX_OOD_ACTION_SHARE),
  },
  'must be a JSON object',
))

export const ResultStatusSchema: v.PicklistSchema<readonly ResultStatus[], undefined> = v.picklist(['pending', 'done', 'failed', 'skipped'])

/** One result row of an eval run: one per baseline episode. */
export interface EvalResult {
  /** The baseline episode this row replays. */
  baseline_episode_id: string
  /** `pending` until uploaded, then `done` or `failed`; rows still pending at finalize become `skipped`. */
  status: ResultStatus
  /** Truncated to 2,000 characters; set when `failed`. */
  error: string | null
  /** The uploaded metric blob (see {@link MetricBlob}), or `null` before upload or when none was sent. */
  metrics: Record<string, unknown> | null
  /** The episode recorded while replaying the candidate, when the runner uploaded one. */
  replay_episode_id: string | null
  /** Last change of this row (ISO 8601 UTC). */
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
  /** The run's UUID. */
  eval_run_id: string
  /** Display name; the candidate version when none was given. */
  name: string
  /** `pending` while results come in, `completed` once finalized (then read-only). */
  status: 'pending' | 'completed'
  /** The policy version under test. */
  candidate_policy_version: string
  /** The baselines' policy version, when the creator gave one. */
  baseline_policy_version: string | null
  /** The baseline episodes in the order given at creation; results follow this order. */
  baseline_episode_ids: string[]
  /** The metadata object given at creation (hashes, build links). */
  metadata: Record<string, unknown>
  /** Who replays the episodes; `local` (a client-side runner) in this release. */
  runner_kind: string
  /** Done episodes needed for `ship` (from the create body, default 10). */
  min_episodes: number
  /** Mean OOD action share above which the verdict is `hold` (from the create body, default 0.25). */
  max_ood_action_share: number
  /** When the run was created (ISO 8601 UTC). */
  created_at: string
  /** Last result upload or finalize (ISO 8601 UTC). */
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
  min_episodes: wireCount,
  max_ood_action_share: v.number(),
  created_at: v.string(),
  updated_at: v.string(),
  summary: v.nullable(v.record(v.string(), v.unknown())),
}

export const EvalRunRecord: v.GenericSchema<EvalRunInfo> = typed<EvalRunInfo>()(v.object(evalRunEntries))

/** `201` answer of create: the new run, every row pending. */
export interface CreatedEvalRun extends Omit<EvalRunInfo, 'status'> {
  /** Always `pending` on creation. */
  status: 'pending'
  /** One pending row per baseline episode, in the order given. */
  results: { baseline_episode_id: string; status: 'pending' }[]
}

export const CreateEvalRunResponse: v.GenericSchema<CreatedEvalRun> = typed<CreatedEvalRun>()(v.object({
  ...evalRunEntries,
  status: v.literal('pending'),
  results: v.array(v.object({ baseline_episode_id: v.string(), status: v.literal('pending') })),
}))

/** `GET /api/eval-runs/{id}`: the run with its result rows in baseline order. */
export interface EvalRunDetail extends EvalRunInfo {
  /** One row per baseline episode, in the run's baseline order. */
  results: EvalResult[]
}

export const EvalRunWithResults: v.GenericSchema<EvalRunDetail> = typed<EvalRunDetail>()(v.object({ ...evalRunEntries, results: v.array(EvalResultRow) }))

/** One page of `GET /api/eval-runs`, newest first. */
export interface EvalRunPage {
  /** The runs on this page, newest first. */
  items: EvalRunInfo[]
  /** Pass as `cursor` for the next page; `null` on the last page. */
  next_cursor: string | null
}

export const EvalRunList: v.GenericSchema<EvalRunPage> = typed<EvalRunPage>()(v.object({ items: v.array(EvalRunRecord), next_cursor: v.nullable(v.string()) }))

/** Body of `POST /api/ingest/eval-run/{id}/result` (a retry replaces the row). */
export interface UploadResultInput {
  /** Which of the run's baselines this result is for; any other id answers 404. */
  baseline_episode_id: string
  /** `done` when the replay finished (metrics expected), `failed` when it could not run. */
  status: 'done' | 'failed'
  /** The candidate's replay episode, when the runner recorded one. */
  replay_episode_id?: string | null
  /** Stored truncated to 2,000 characters. */
  error?: string | null
  /** The per-episode metrics the rollup pairs; validated, 400 when malformed. */
  metrics?: MetricBlob | null
}

export const UploadResultBody: v.GenericSchema<UploadResultInput> = typed<UploadResultInput>()(v.strictObject(
  {
    baseline_episode_id: idString,
    status: v.picklist(['done', 'failed'], 'must be done or failed'),
    replay_episode_id: v.optional(v.nullable(idString)),
    error: v.optional(v.nullable(v.string('must be a string'))),
    metrics: v.optional(v.nullable(MetricBlobSchema)),
  },
  'must be a JSON object',
))

/** `200` answer of the result upload. */
export interface UploadResultResult {
  /** The run the result was stored in. */
  eval_run_id: string
  /** The baseline episode the row belongs to. */
  baseline_episode_id: string
  /** The stored status. */
  status: 'done' | 'failed'
  /** When the row was stored (ISO 8601 UTC). */
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
  n: v.pipe(wireCount, v.description('number of pairs: done rows with both values')),
  ci_low: v.pipe(v.nullable(v.number()), v.description('95% interval of the paired delta; null when n < 2')),
  ci_high: v.nullable(v.number()),
  significant: v.pipe(v.nullable(v.boolean()), v.description('the interval excludes 0; null without an interval')),
  method: v.picklist(['newcombe_paired', 'bootstrap_paired']),
  p_value: v.pipe(v.nullable(v.number()), v.description('exact mid-p McNemar (success_rate, collision_rate); null for the others')),
  candidate_source: v.pipe(
    v.object({ reported: wireCount, recorded: wireCount }),
    v.description('over the pairs: candidate values reported by the policy through _outcome vs copied from the baseline'),
  ),
}))

export const ActionDivergenceSchema: v.GenericSchema<ActionDivergence> = typed<ActionDivergence>()(v.object({
  n: wireCount,
  l2_mean: v.nullable(v.number()),
  l2_normalized_mean: v.nullable(v.number()),
  ood_action_share_mean: v.nullable(v.number()),
  max_ood_action_share: v.number(),
}))

export const RollupSummarySchema: v.GenericSchema<RollupSummary> = typed<RollupSummary>()(v.object({
  success_rate: MetricSummarySchema,
  reward_mean: MetricSummarySchema,
  collision_rate: MetricSummarySchema,
  time_to_goal_s: MetricSummarySchema,
  ood_action_share: MetricSummarySchema,
  better_count: wireCount,
  metric_total: wireCount,
  recommend: v.pipe(v.picklist(['ship', 'hold']), v.description('ship exactly when verdict is ship')),
  episodes: v.object({ total: wireCount, done: wireCount, failed: wireCount, skipped: wireCount, pending: wireCount }),
  verdict: v.picklist(['ship', 'hold', 'inconclusive']),
  reasons: v.pipe(v.array(v.string()), v.description('plain sentences with the numbers that decided the verdict, most important first')),
  min_episodes: wireCount,
  episodes_needed: v.pipe(
    v.nullable(wireCount),
    v.description('for inconclusive: paired episodes that would resolve the most important undecided metric (80% power, two-sided 5%)'),
  ),
  action_divergence: ActionDivergenceSchema,
}))

/** `200` answer of the eval-run finalize (the same body on every repeat). */
export interface FinalizedEvalRun {
  /** The finalized run. */
  eval_run_id: string
  /** Always `completed`. */
  status: 'completed'
  /** When the run was finalized (ISO 8601 UTC); unchanged by repeats. */
  updated_at: string
  /** The rollup: per-metric paired comparisons and the verdict. */
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
  /** The previous page's `next_cursor`. */
  cursor?: string
  /** Only runs in this state. */
  status?: 'pending' | 'completed'
  /** Only runs of this candidate version (exact). */
  candidate_policy_version?: string
  /** Only runs against this baseline version (exact): one candidate lineage. */
  baseline_policy_version?: string
  /** An eval run id: only runs over exactly the same set of baseline episodes as that run. */
  baselines_of?: string
  /** ISO 8601 date or date-time (UTC when no zone is given); inclusive. */
  created_after?: string
  /** ISO 8601 date or date-time (UTC when no zone is given); exclusive. */
  created_before?: string
}

/** The eval-run list query after validation. */
export interface ListEvalRunsInput extends Omit<ListEvalRunsParams, 'limit' | 'created_after' | 'created_before'> {
  /** Page size, 50 when left out. */
  limit: number
  /** Inclusive lower bound on `created_at`. */
  created_after?: Date
  /** Exclusive upper bound on `created_at`. */
  created_before?: Date
}

export const ListEvalRunsQuery: v.GenericSchema<ListEvalRunsParams, ListEvalRunsInput> = typed<ListEvalRunsParams, ListEvalRunsInput>()(v.strictObject(
  {
    limit: limitParam,
    cursor: v.optional(v.string()),
    status: v.optional(v.picklist(['pending', 'completed'], 'must be pending or completed')),
    // Code points, as at create (`maxLength` would count UTF-16 units and refuse a stored version).
    candidate_policy_version: v.optional(text(120)),
    baseline_policy_version: v.optional(text(120)),
    baselines_of: v.optional(v.pipe(v.string(), v.uuid('must be an eval run id'))),
    created_after: instantParam,
    created_before: instantParam,
  },
  'unknown query parameter',
))
