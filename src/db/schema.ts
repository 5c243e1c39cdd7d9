/**
 * Table types for Kysely. Column names match the wire names where a column is
 * exposed (snake_case), so row-to-JSON mapping stays obvious.
 */
import type { ColumnType } from 'kysely'

type Timestamp = ColumnType<Date, Date | string, Date | string>
/** int8 columns: postgres.js returns strings, PGlite numbers; mappers use Number(). */
type Int8 = ColumnType<string | number, number | bigint | string, number | bigint | string>
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

export interface Database {
  clients: ClientsTable
  api_keys: ApiKeysTable
  episodes: EpisodesTable
  eval_runs: EvalRunsTable
  eval_results: EvalResultsTable
}

