/**
 * Table types for Kysely. Column names match the wire names where a column is
 * exposed (snake_case), so row-to-JSON mapping stays obvious.
 */
import type { ColumnType } from 'kysely'

/** A `timestamptz` column: read as a `Date`, written as a `Date` or an ISO 8601 string. */
export type TimestampColumn = ColumnType<Date, Date | string, Date | string>
/** int8 columns: postgres.js returns strings, PGlite numbers (bigints beyond 2^53); mappers use Number() or toInt64(). */
export type Int8Column = ColumnType<string | number | bigint, number | bigint | string, number | bigint | string>
/** A JSON column: read as `T`, written as JSON text. */
export type JsonColumn<T = unknown> = ColumnType<T, string, string>

/** A client: the owner of API keys and of everything they record. */
export interface ClientsTable {
  /** The client's UUID; every episode, run, key and webhook belongs to one. */
  id: string
  /** Unique name given by `episodic clients create`. */
  name: string
  /** When it was created. */
  created_at: TimestampColumn
}

/** An API key of a client. */
export interface ApiKeysTable {
  /** The middle part of `epk_<key_id>_<secret>`, the handle used to revoke it. */
  key_id: string
  /** The client the key acts for. */
  client_id: string
  /** SHA-256 of the secret, hex; the secret itself is never stored. */
  secret_sha256: string
  /** When it was created. */
  created_at: TimestampColumn
  /** When it was revoked; `null` while it works. */
  revoked_at: TimestampColumn | null
}

/** Lifecycle of an episode: `recording` until finalized as `ready` or `failed`; `archived` hides it. */
export type EpisodeStatus = 'recording' | 'ready' | 'failed' | 'archived'
/** Where an episode comes from: a real robot, a simulator, or a replay of a candidate policy. */
export type EpisodeSource = 'real' | 'sim' | 'replay'

/** A recorded episode; artifacts live in object storage under `objectKey`. */
export interface EpisodesTable {
  /** The episode's UUID (`episode_id` on the wire). */
  id: string
  /** The client that recorded it. */
  client_id: string
  /** Optional name given at open. */
  name: string | null
  /** Real robot, simulation or replay. */
  source: EpisodeSource
  /** Robot identifier. */
  robot: string | null
  /** Version of the policy that acted. */
  policy_version: string | null
  /** Version of the environment or simulator. */
  env_version: string | null
  /** Commit of the recording code. */
  git_sha: string | null
  /** Signed 64-bit seed, exact. */
  seed: Int8Column | null
  /** Frames per second. */
  fps: number | null
  /** Free-form JSON object (stored as JSON text on insert and update). */
  metadata: JsonColumn<Record<string, unknown>>
  /** Lifecycle status. */
  status: EpisodeStatus
  /** Length in seconds, set at finalize. */
  duration_s: number | null
  /** Total artifact bytes, set at finalize. */
  bytes_total: Int8Column | null
  /** Artifact kinds whose upload URLs were minted at open. */
  artifacts: string[]
  /** When it was opened. */
  created_at: TimestampColumn
  /** Last change. */
  updated_at: TimestampColumn
}

/** `pending` while results come in, `completed` once finalized. */
export type EvalRunStatus = 'pending' | 'completed'
/** One result row's state: `pending` until uploaded, `done` or `failed`, or `skipped` at finalize. */
export type EvalResultStatus = 'pending' | 'done' | 'failed' | 'skipped'

/** An eval run: a candidate policy replayed against baseline episodes. */
export interface EvalRunsTable {
  /** The run's UUID. */
  id: string
  /** The client that created it. */
  client_id: string
  /** Display name (the candidate version when none was given). */
  name: string
  /** Pending or completed. */
  status: EvalRunStatus
  /** The policy version under test. */
  candidate_policy_version: string
  /** The baselines' policy version, if given. */
  baseline_policy_version: string | null
  /** Hashes and build links given at creation. */
  metadata: JsonColumn<Record<string, unknown>>
  /** Who replays the episodes (`local`). */
  runner_kind: string
  /** Done rows needed for a `ship` verdict (1..10000). */
  min_episodes: ColumnType<number, number | undefined, number>
  /** Mean OOD action share above which the verdict is `hold` (0..1). */
  max_ood_action_share: ColumnType<number, number | undefined, number>
  /** The rollup, set at finalize. */
  summary: JsonColumn<unknown> | null
  /** When it was created. */
  created_at: TimestampColumn
  /** Last result upload or finalize. */
  updated_at: TimestampColumn
}

/** One eval result: the outcome of replaying one baseline episode in a run. */
export interface EvalResultsTable {
  /** The run this row belongs to. */
  eval_run_id: string
  /** The baseline episode it replays. */
  baseline_episode_id: string
  /** Order of the baseline in the run (0-based). */
  position: number
  /** Pending, done, failed or skipped. */
  status: EvalResultStatus
  /** Why it failed, truncated to 2,000 characters. */
  error: string | null
  /** The uploaded metric blob. */
  metrics: JsonColumn<Record<string, unknown>> | null
  /** The candidate's replay episode, if recorded. */
  replay_episode_id: string | null
  /** Last change. */
  updated_at: TimestampColumn
}

/** One `Idempotency-Key` of a client: running, or done with the answer to replay. */
export interface IdempotencyKeysTable {
  /** The client that sent the key. */
  client_id: string
  /** The `Idempotency-Key` header's value. */
  key: string
  /** SHA-256 of the method, path and body bytes of the first request. */
  fingerprint: string
  /** `running` while the first request runs, then `done`. */
  state: 'running' | 'done'
  /** The first answer's HTTP status, once done. */
  status: number | null
  /** The first answer's JSON body. */
  response: string | null
  /** When the running request took the key (a crashed one's key is taken over later). */
  locked_at: TimestampColumn
  /** When the key was first used. */
  created_at: TimestampColumn
}

/** A multipart upload the API started, and its plan. */
export interface MultipartUploadsTable {
  /** The episode the artifact belongs to. */
  episode_id: string
  /** The store's upload id. */
  upload_id: string
  /** The artifact kind. */
  kind: string
  /** Declared size in bytes. */
  size: Int8Column
  /** Bytes per part. */
  part_size: Int8Column
  /** Number of parts. */
  part_count: number
  /** When it was started. */
  created_at: TimestampColumn
}

/** A secret the service makes for itself and every instance on the database shares (the portal's session key). */
export interface ServiceSecretsTable {
  /** What the secret is for (`portal_session`). */
  name: string
  /** The secret, base64url. */
  value: string
  /** When the first instance that needed it made it. */
  created_at: Date
}

/** A webhook endpoint registered by `episodic webhooks add`. */
export interface WebhookEndpointsTable {
  /** The endpoint's UUID. */
  id: string
  /** The client whose events it receives. */
  client_id: string
  /** Where deliveries are POSTed. */
  url: string
  /** `whsec_<base64>`, as printed once by `episodic webhooks add`. */
  secret: string
  /** When it was added. */
  created_at: TimestampColumn
}

/** State of one webhook delivery: `pending` (queued or retrying), `delivered`, or `failed` after the last attempt. */
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One webhook delivery to one endpoint, with its retry state. */
export interface WebhookDeliveriesTable {
  /** The `webhook-id` header and the body's `id`. */
  id: string
  /** The endpoint it goes to. */
  endpoint_id: string
  /** Event name, e.g. `eval_run.completed`. */
  event_type: string
  /** The eval run the event is about, if any. */
  eval_run_id: string | null
  /** The exact JSON body sent on every attempt. */
  payload: string
  /** Pending, delivered or failed. */
  status: WebhookDeliveryStatus
  /** Attempts made so far. */
  attempts: number
  /** When the next attempt is due; while claimed, when the claim lapses. */
  next_attempt_at: TimestampColumn
  /** Set by the instance that claimed the row for an attempt. */
  lease_token: string | null
  /** When the last attempt was made. */
  last_attempt_at: TimestampColumn | null
  /** HTTP status of the last attempt; `null` when it got no answer. */
  last_status: number | null
  /** Why the last attempt failed. */
  last_error: string | null
  /** When the delivery was queued. */
  created_at: TimestampColumn
  /** When an attempt succeeded. */
  delivered_at: TimestampColumn | null
}

/** The database schema as Kysely sees it: one entry per table. `openDatabase` migrates to it. */
export interface Database {
  /** `Idempotency-Key`s and the answers to replay. */
  idempotency_keys: IdempotencyKeysTable
  /** Multipart uploads started through the API. */
  multipart_uploads: MultipartUploadsTable
  /** Clients: the owners of keys and data. */
  clients: ClientsTable
  /** API keys (hashed). */
  api_keys: ApiKeysTable
  /** Recorded episodes. */
  episodes: EpisodesTable
  /** Eval runs. */
  eval_runs: EvalRunsTable
  /** Eval results: one row per run and baseline episode. */
  eval_results: EvalResultsTable
  /** Secrets the service keeps for all its instances. */
  service_secrets: ServiceSecretsTable
  /** Webhook endpoints. */
  webhook_endpoints: WebhookEndpointsTable
  /** Queued and sent webhook deliveries. */
  webhook_deliveries: WebhookDeliveriesTable
}
