/**
 * Wire bodies of the ingest endpoints (spec, "POST /api/ingest/episode" and
 * ".../finalize"). These schemas validate requests, type the client library
 * and generate the OpenAPI document.
 */
import * as v from 'valibot'
import { int8, jsonObject, nonNegative, nonNegativeInt, optionalText, positive } from '../http/fields.ts'

/** Episode metadata limit (JSON bytes). */
export const EPISODE_METADATA_LIMIT = 256 * 1024

export const ArtifactKindSchema = v.picklist(['video', 'sensors', 'actions'], 'must be one of video, sensors, actions')
export const EpisodeSourceSchema = v.picklist(['real', 'sim', 'replay'], 'must be one of real, sim, replay')

export const OpenEpisodeBody = v.strictObject(
  {
    name: optionalText(200),
    source: v.optional(EpisodeSourceSchema, 'real'),
    robot: optionalText(120),
    policy_version: optionalText(120),
    env_version: optionalText(120),
    git_sha: optionalText(64),
    seed: v.optional(v.nullable(int8)),
    fps: v.optional(v.nullable(positive)),
    metadata: v.optional(jsonObject(EPISODE_METADATA_LIMIT), {}),
    request_uploads: v.optional(
      v.pipe(
        v.array(ArtifactKindSchema, 'must be an array of artifact kinds'),
        v.check((kinds) => new Set(kinds).size === kinds.length, 'must not repeat a kind'),
      ),
      ['video', 'sensors', 'actions'],
    ),
  },
  'must be a JSON object',
)
export type OpenEpisodeInput = v.InferInput<typeof OpenEpisodeBody>

export const UploadUrl = v.object({
  kind: ArtifactKindSchema,
  url: v.string(),
  expires_at: v.string(),
  public_url: v.nullable(v.string()),
})

export const OpenEpisodeResponse = v.object({
  episode_id: v.string(),
  status: v.literal('recording'),
  storage: v.picklist(['r2', 'unconfigured']),
  upload_urls: v.array(UploadUrl),
})
export type OpenEpisodeResult = v.InferOutput<typeof OpenEpisodeResponse>

export const FinalizeEpisodeBody = v.strictObject(
  {
    status: v.optional(v.picklist(['ready', 'failed'], 'must be ready or failed'), 'ready'),
    duration_s: v.optional(v.nullable(nonNegative)),
    fps: v.optional(v.nullable(positive)),
    bytes_total: v.optional(v.nullable(nonNegativeInt)),
    metadata: v.optional(jsonObject(EPISODE_METADATA_LIMIT)),
  },
  'must be a JSON object',
)
export type FinalizeEpisodeInput = v.InferInput<typeof FinalizeEpisodeBody>

export const FinalizeEpisodeResponse = v.object({
  episode_id: v.string(),
  status: v.picklist(['ready', 'failed']),
  updated_at: v.string(),
})
export type FinalizeEpisodeResult = v.InferOutput<typeof FinalizeEpisodeResponse>

/** The full stored episode record (`GET /api/episodes/{id}`). */
export const EpisodeRecord = v.object({
  episode_id: v.string(),
  client_id: v.string(),
  name: v.nullable(v.string()),
  display_name: v.string(),
  source: EpisodeSourceSchema,
  robot: v.nullable(v.string()),
  policy_version: v.nullable(v.string()),
  env_version: v.nullable(v.string()),
  git_sha: v.nullable(v.string()),
  seed: v.nullable(v.number()),
  fps: v.nullable(v.number()),
  metadata: v.record(v.string(), v.unknown()),
  status: v.picklist(['recording', 'ready', 'failed', 'archived']),
  duration_s: v.nullable(v.number()),
  bytes_total: v.nullable(v.number()),
  artifacts: v.array(ArtifactKindSchema),
  created_at: v.string(),
  updated_at: v.string(),
})
export type Episode = v.InferOutput<typeof EpisodeRecord>
