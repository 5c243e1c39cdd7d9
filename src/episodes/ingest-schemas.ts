/**
 * Wire bodies of the ingest endpoints (spec, "POST /api/ingest/episode" and
 * ".../finalize"). These schemas validate requests, type the client library
 * and generate the OpenAPI document.
 */
import * as v from 'valibot'
import type { EpisodeSource, EpisodeStatus } from '../db/schema.ts'
import { distinct, int64, jsonObject, nonNegative, nonNegativeInt, optionalText, positive, wireCount } from '../http/fields.ts'
import { typed } from '../http/typed-schema.ts'
import type { ArtifactKind } from '../storage/types.ts'

/** Episode metadata limit (JSON bytes). */
export const EPISODE_METADATA_LIMIT = 256 * 1024

export const ArtifactKindSchema: v.PicklistSchema<readonly ArtifactKind[], string> = v.picklist(
  ['video', 'sensors', 'actions'],
  'must be one of video, sensors, actions',
)
export const EpisodeSourceSchema: v.PicklistSchema<readonly EpisodeSource[], string> = v.picklist(['real', 'sim', 'replay'], 'must be one of real, sim, replay')

/** Body of `POST /api/ingest/episode` as a client sends it: every field optional. */
export interface OpenEpisodeInput {
  /** At most 200 characters. */
  name?: string | null
  /** Default `real`. */
  source?: EpisodeSource
  /** At most 120 characters. */
  robot?: string | null
  /** At most 120 characters. */
  policy_version?: string | null
  /** At most 120 characters. */
  env_version?: string | null
  /** At most 64 characters. */
  git_sha?: string | null
  /**
   * A signed 64-bit integer, exact over the whole range: pass a `bigint`
   * beyond 2^53 (the wire carries a JSON number with every digit).
   */
  seed?: number | bigint | null
  /** Positive. */
  fps?: number | null
  /** Free-form JSON object, at most 256 KiB as JSON; default `{}`. */
  metadata?: Record<string, unknown>
  /** Artifacts to get signed upload URLs for; default all three, `[]` for a metadata-only run. */
  request_uploads?: ArtifactKind[]
}

/** The open body after validation, defaults filled in. */
export interface OpenEpisodeParsed extends Omit<OpenEpisodeInput, 'source' | 'metadata' | 'request_uploads'> {
  /** `real` when left out. */
  source: EpisodeSource
  /** `{}` when left out. */
  metadata: Record<string, unknown>
  /** All three kinds when left out. */
  request_uploads: ArtifactKind[]
}

export const OpenEpisodeBody: v.GenericSchema<OpenEpisodeInput, OpenEpisodeParsed> = typed<OpenEpisodeInput, OpenEpisodeParsed>()(v.strictObject(
  {
    name: optionalText(200),
    source: v.optional(EpisodeSourceSchema, 'real'),
    robot: optionalText(120),
    policy_version: optionalText(120),
    env_version: optionalText(120),
    git_sha: optionalText(64),
    seed: v.optional(v.nullable(int64)),
    fps: v.optional(v.nullable(positive)),
    metadata: v.optional(jsonObject(EPISODE_METADATA_LIMIT), {}),
    request_uploads: v.optional(
      v.pipe(
        v.array(ArtifactKindSchema, 'must be an array of artifact kinds'),
        distinct<ArtifactKind>('must not repeat a kind'),
      ),
      ['video', 'sensors', 'actions'],
    ),
  },
  'must be a JSON object',
))

/** One element of `upload_urls` (spec, "Upload URL entry"). */
export interface UploadUrlEntry {
  /** The artifact this URL uploads. */
  kind: ArtifactKind
  /** Signed PUT URL; the artifact's Content-Type is bound into the signature. */
  url: string
  /** 30 minutes after minting. */
  expires_at: string
  /** Set only when the deployment has a public base address. */
  public_url: string | null
}

export const UploadUrl: v.GenericSchema<UploadUrlEntry> = typed<UploadUrlEntry>()(v.object({
  kind: ArtifactKindSchema,
  url: v.string(),
  expires_at: v.string(),
  public_url: v.nullable(v.string()),
}))

/** `201` answer of `POST /api/ingest/episode`. */
export interface OpenEpisodeResult {
  /** The new episode's UUID. */
  episode_id: string
  /** A new episode records until finalized. */
  status: 'recording'
  /** `r2` whenever signed URLs work; `unconfigured` without object storage. */
  storage: 'r2' | 'unconfigured'
  /** One signed PUT URL per requested kind; empty when storage is `unconfigured`. */
  upload_urls: UploadUrlEntry[]
}

export const OpenEpisodeResponse: v.GenericSchema<OpenEpisodeResult> = typed<OpenEpisodeResult>()(v.object({
  episode_id: v.string(),
  status: v.literal('recording'),
  storage: v.picklist(['r2', 'unconfigured']),
  upload_urls: v.array(UploadUrl),
}))

/** Body of `POST /api/ingest/episode/{id}/finalize`: every field optional. */
export interface FinalizeEpisodeInput {
  /** Default `ready`. */
  status?: 'ready' | 'failed'
  /** At least 0. */
  duration_s?: number | null
  /** Positive; overrides the value given at open. */
  fps?: number | null
  /** An integer from 0 to 2^53 - 1. */
  bytes_total?: number | null
  /** Merged per key into the stored metadata. */
  metadata?: Record<string, unknown>
  /**
   * Check the store first (default false): a requested artifact that is
   * absent gives 409 `artifacts missing: <kinds>` and nothing changes; an
   * omitted `bytes_total` becomes the sum of the present sizes.
   */
  verify_artifacts?: boolean
}

/** The finalize body after validation. */
export interface FinalizeEpisodeParsed extends Omit<FinalizeEpisodeInput, 'status'> {
  /** `ready` when left out. */
  status: 'ready' | 'failed'
}

export const FinalizeEpisodeBody: v.GenericSchema<FinalizeEpisodeInput, FinalizeEpisodeParsed> = typed<FinalizeEpisodeInput, FinalizeEpisodeParsed>()(
  v.strictObject(
    {
      status: v.optional(v.picklist(['ready', 'failed'], 'must be ready or failed'), 'ready'),
      duration_s: v.optional(v.nullable(nonNegative)),
      fps: v.optional(v.nullable(positive)),
      bytes_total: v.optional(v.nullable(nonNegativeInt)),
      metadata: v.optional(jsonObject(EPISODE_METADATA_LIMIT)),
      verify_artifacts: v.optional(v.boolean('must be true or false')),
    },
    'must be a JSON object',
  ),
)

/** `200` answer of finalize. */
export interface FinalizeEpisodeResult {
  /** The finalized episode. */
  episode_id: string
  /** The status it now has. */
  status: 'ready' | 'failed'
  /** When it was finalized (ISO 8601 UTC). */
  updated_at: string
}

export const FinalizeEpisodeResponse: v.GenericSchema<FinalizeEpisodeResult> = typed<FinalizeEpisodeResult>()(v.object({
  episode_id: v.string(),
  status: v.picklist(['ready', 'failed']),
  updated_at: v.string(),
}))

/** The full stored episode record (`GET /api/episodes/{id}`). */
export interface Episode {
  /** The episode's UUID. */
  episode_id: string
  /** The client (API key owner) that recorded it. */
  client_id: string
  /** The name given at open, if any. */
  name: string | null
  /** `name`, or `episode_<first 8 characters of the id>` when unnamed. */
  display_name: string
  /** Whether it was recorded on a real robot, in simulation or by a replay. */
  source: EpisodeSource
  /** Robot identifier given at open. */
  robot: string | null
  /** Version of the policy that acted. */
  policy_version: string | null
  /** Version of the environment or simulator. */
  env_version: string | null
  /** Commit of the code that recorded it. */
  git_sha: string | null
  /** A number, or a `bigint` outside ±(2^53 - 1) so that no digit is lost. */
  seed: number | bigint | null
  /** Frames per second of the recording. */
  fps: number | null
  /** Free-form JSON object given at open and merged at finalize. */
  metadata: Record<string, unknown>
  /** `recording` until finalized, then `ready` or `failed`; `archived` once archived. */
  status: EpisodeStatus
  /** Length in seconds, as given at finalize. */
  duration_s: number | null
  /** Total artifact bytes, as given (or computed by `verify_artifacts`) at finalize. */
  bytes_total: number | null
  /** Kinds whose upload URLs were minted at open. */
  artifacts: ArtifactKind[]
  /** When it was opened (ISO 8601 UTC). */
  created_at: string
  /** Last change (ISO 8601 UTC). */
  updated_at: string
}

export const EpisodeRecord: v.GenericSchema<Episode> = typed<Episode>()(v.object({
  episode_id: v.string(),
  client_id: v.string(),
  name: v.nullable(v.string()),
  display_name: v.string(),
  source: EpisodeSourceSchema,
  robot: v.nullable(v.string()),
  policy_version: v.nullable(v.string()),
  env_version: v.nullable(v.string()),
  git_sha: v.nullable(v.string()),
  seed: v.nullable(int64),
  fps: v.nullable(v.number()),
  metadata: v.record(v.string(), v.unknown()),
  status: v.picklist(['recording', 'ready', 'failed', 'archived']),
  duration_s: v.nullable(v.number()),
  bytes_total: v.nullable(wireCount),
  artifacts: v.array(ArtifactKindSchema),
  created_at: v.string(),
  updated_at: v.string(),
}))

/** What an `Idempotency-Key` header may hold: 1 to 255 printable ASCII characters (the CLI checks it before sending). */
export const IDEMPOTENCY_KEY_SYNTAX: RegExp = /^[\x20-\x7e]{1,255}$/
