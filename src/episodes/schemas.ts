/** Query and response schemas of the episode read endpoints. */
import * as v from 'valibot'
import { limitParam } from '../http/fields.ts'
import { EpisodeRecord, EpisodeSourceSchema } from '../ingest/schemas.ts'

export const EpisodeStatusSchema = v.picklist(['recording', 'ready', 'failed', 'archived'], 'must be one of recording, ready, failed, archived')

export const ListEpisodesQuery = v.strictObject(
  {
    limit: limitParam,
    cursor: v.optional(v.string()),
    source: v.optional(EpisodeSourceSchema),
    status: v.optional(EpisodeStatusSchema),
    policy_version: v.optional(v.pipe(v.string(), v.maxLength(120, 'must be at most 120 characters'))),
    robot: v.optional(v.pipe(v.string(), v.maxLength(120, 'must be at most 120 characters'))),
  },
  'unknown query parameter',
)
export type ListEpisodesInput = v.InferOutput<typeof ListEpisodesQuery>

export const EpisodeList = v.object({
  items: v.array(EpisodeRecord),
  next_cursor: v.nullable(v.string()),
})
