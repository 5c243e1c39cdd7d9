/** Query and response schemas of the episode read endpoints. */
import * as v from 'valibot'
import type { EpisodeSource, EpisodeStatus } from '../db/schema.ts'
import { limitParam, text } from '../http/fields.ts'
import { instantParam } from '../http/time-param.ts'
import { typed } from '../http/typed-schema.ts'
import type { ArtifactKind } from '../storage/types.ts'
import { ArtifactKindSchema, type Episode, EpisodeRecord, EpisodeSourceSchema } from './ingest-schemas.ts'

export const EpisodeStatusSchema: v.PicklistSchema<readonly EpisodeStatus[], string> = v.picklist(
  ['recording', 'ready', 'failed', 'archived'],
  'must be one of recording, ready, failed, archived',
)

/** Query of `GET /api/episodes` as sent (query-string values). */
export interface ListEpisodesParams {
  /** 1..200, default 50. */
  limit?: string
  /** `next_cursor` of the previous page. */
  cursor?: string
  /** Only episodes from this source. */
  source?: EpisodeSource
  /** Only episodes in this status. */
  status?: EpisodeStatus
  /** Only this policy version (exact). */
  policy_version?: string
  /** Only this robot (exact). */
  robot?: string
  /** ISO 8601 date or date-time (UTC when no zone is given); inclusive. */
  created_after?: string
  /** ISO 8601 date or date-time (UTC when no zone is given); exclusive. */
  created_before?: string
}

/** The list query after validation (`limit` a number, the time range as dates). */
export interface ListEpisodesInput extends Omit<ListEpisodesParams, 'limit' | 'created_after' | 'created_before'> {
  /** Page size, 50 when left out. */
  limit: number
  /** Inclusive lower bound on `created_at`. */
  created_after?: Date
  /** Exclusive upper bound on `created_at`. */
  created_before?: Date
}

export const ListEpisodesQuery: v.GenericSchema<ListEpisodesParams, ListEpisodesInput> = typed<ListEpisodesParams, ListEpisodesInput>()(v.strictObject(
  {
    limit: limitParam,
    cursor: v.optional(v.string()),
    source: v.optional(EpisodeSourceSchema),
    status: v.optional(EpisodeStatusSchema),
    policy_version: v.optional(text(120)),
    robot: v.optional(text(120)),
    created_after: instantParam,
    created_before: instantParam,
  },
  'unknown query parameter',
))

/** One page of `GET /api/episodes`, newest first. */
export interface EpisodePage {
  /** The episodes on this page, newest first. */
  items: Episode[]
  /** Pass as `cursor` for the next page; null on the last. */
  next_cursor: string | null
}

export const EpisodeList: v.GenericSchema<EpisodePage> = typed<EpisodePage>()(v.object({
  items: v.array(EpisodeRecord),
  next_cursor: v.nullable(v.string()),
}))

/** The artifact route's query: `redirect=1` (or `true`) answers 302 to the signed URL; `0`, `false` or none, JSON. */
export const ArtifactUrlQuery = v.strictObject({
  redirect: v.optional(v.picklist(['0', '1', 'true', 'false'], 'must be 1 or 0 (true or false)')),
})

/** A signed download URL for one artifact: the artifact route's JSON answer (the client's `artifactUrl`). */
export interface ArtifactAccess {
  /** The episode the artifact belongs to. */
  episode_id: string
  /** Which artifact. */
  kind: ArtifactKind
  /** Signed GET URL; needs no API key. */
  url: string
  /** When the URL stops working (ISO 8601 UTC, 15 minutes after minting). */
  expires_at: string
}

/** The artifact route's `200` body (OpenAPI). */
export const ArtifactAccessResponse: v.GenericSchema<ArtifactAccess> = typed<ArtifactAccess>()(v.object({
  episode_id: v.string(),
  kind: ArtifactKindSchema,
  url: v.string(),
  expires_at: v.string(),
}))
