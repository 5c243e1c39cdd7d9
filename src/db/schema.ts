/**
 * Table types for Kysely. Column names match the wire names where a column is
 * exposed (snake_case), so row-to-JSON mapping stays obvious.
 */
import type { ColumnType } from 'kysely'

type Timestamp = ColumnType<Date, Date | string, Date | string>
/** int8 columns: postgres.js returns strings, PGlite numbers (bigints beyond 2^53); mappers use Number() or toInt64(). */
type Int8 = ColumnType<string | number | bigint, number | bigint | string, number | bigint | string>
type Json<T = unknown> = ColumnType<T, string, string>

export interface ClientsTable {
  id: string
  name: string
  created_at: Timestamp
}

export interface ApiKeysTable {
  key_id: string
  client_id: string
  secret_sha256: string
  created_at: Timestamp
  revoked_at: Timestamp | null
}

export type EpisodeStatus = 'recording' | 'ready' | 'failed' | 'archived'
export type EpisodeSource = 'real' | 'sim' | 'replay'

export interface EpisodesTable {
  id: string
  client_id: string
  name: string | null
  source: EpisodeSource
  robot: string | null
  policy_version: string | null
  env_version: string | null
  git_sha: string | null
  seed: Int8 | null
  fps: number | null
  metadata: Json<Record<string, unknown>>
  status: EpisodeStatus
  duration_s: number | null
  bytes_total: Int8 | null
  /** Artifact kinds whose upload URLs were minted at open. */
  artifacts: string[]
  created_at: Timestamp
  updated_at: Timestamp
}

export type EvalRunStatus = 'pending' | 'completed'
export type EvalResultStatus = 'pending' | 'done' | 'failed' | 'skipped'

export interface EvalRunsTable {
  id: string
  client_id: string
  name: string
  status: EvalRunStatus
  candidate_policy_version: string
  baseline_policy_version: string | null
  metadata: Json<Record<string, unknown>>
  runner_kind: string
  /** Done rows needed for a `ship` verdict (1..10000). */
  min_episodes: ColumnType<number, number | undefined, number>
  /** Mean OOD action share above which the verdict is `hold` (0..1). */
  max_ood_action_share: ColumnType<number, number | undefined, number>
  summary: Json<unknown> | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface EvalResultsTable {
  eval_run_id: string
  baseline_episode_id: string
  position: number
  status: EvalResultStatus
  error: string | null
  metrics: Json<Record<string, unknown>> | null
  replay_episode_id: string | null
  updated_at: Timestamp
}

/** One `Idempotency-Key` of a client: running, or done with the answer to replay. */
export interface IdempotencyKeysTable {
  client_id: string
  key: string
  /** SHA-256 of the method, path and body bytes of the first request. */
  fingerprint: string
  state: 'running' | 'done'
  status: number | null
  /** The first answer's JSON body. */
  response: string | null
  /** When the running request took the key (a crashed one's key is taken over later). */
  locked_at: Timestamp
  created_at: Timestamp
}

/** A multipart upload the API started, and its plan. */
export interface MultipartUploadsTable {
  episode_id: string
  upload_id: string
  kind: string
  size: Int8
  part_size: Int8
  part_count: number
  created_at: Timestamp
}

export interface WebhookEndpointsTable {
  id: string
  client_id: string
  url: string
  /** `whsec_<base64>`, as printed once by `episodic webhooks add`. */
  secret: string
  created_at: Timestamp
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface WebhookDeliveriesTable {
  /** The `webhook-id` header and the body's `id`. */
  id: string
  endpoint_id: string
  event_type: string
  eval_run_id: string | null
  /** The exact JSON body sent on every attempt. */
  payload: string
  status: WebhookDeliveryStatus
  attempts: number
  /** When the next attempt is due; while claimed, when the claim lapses. */
  next_attempt_at: Timestamp
  /** Set by the instance that claimed the row for an attempt. */
  lease_token: string | null
  last_attempt_at: Timestamp | null
  last_status: number | null
  last_error: string | null
  created_at: Timestamp
  delivered_at: Timestamp | null
}

export interface Database {
  idempotency_keys: IdempotencyKeysTable
  multipart_uploads: MultipartUploadsTable
  clients: ClientsTable
  api_keys: ApiKeysTable
  episodes: EpisodesTable
  eval_runs: EvalRunsTable
  eval_results: EvalResultsTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
}
