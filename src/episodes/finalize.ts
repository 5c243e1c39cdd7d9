/**
 * The finalize rule (spec, "POST /api/ingest/episode/{episode_id}/finalize"):
 * one UPDATE that merges metadata per key with `||`, so concurrent finalizes
 * never lose a key; a `ready` episode keeps its status and its `updated_at`
 * (finalizing again returns the same payload). Metadata merged over repeated
 * finalizes stays within the limit of one request (as PostgreSQL writes it).
 * When the UPDATE touches no row, a second read tells an archived episode
 * (409) from an unknown or foreign one (404) and from a merge too large (400).
 *
 * The UPDATE takes its changes from a VALUES list, so the finalizes of one
 * event-loop turn are one statement when the ingest writer batches them
 * (`writer.ts`), and a single finalize is the same statement with one row;
 * it is written with Kysely and compiled once per batch size (`prepareRows`).
 */
import { type Kysely, sql } from 'kysely'
import { prepareRows } from '../db/prepared.ts'
import { iso } from '../clock.ts'
import type { Database } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import { jsonText } from '../http/json.ts'
import { EPISODE_METADATA_LIMIT, type FinalizeEpisodeResult } from './ingest-schemas.ts'

export interface FinalizeChange {
  status: 'ready' | 'failed'
  durationS?: number | null
  fps?: number | null
  bytesTotal?: number | null
  metadata?: Record<string, unknown>
  now: Date
}

/** One finalize to apply: whose episode, which, and the change. */
export interface FinalizeItem {
  clientId: string
  episodeId: string
  change: FinalizeChange
}

/** What the finalize UPDATE returns; none when the episode is unknown, foreign or archived. */
export interface FinalizedRow {
  id: string
  status: string
  updated_at: Date | string
}

const CHANGE_FIELDS = ['client_id', 'id', 'status', 'duration_s', 'fps', 'bytes_total', 'metadata', 'now'] as const
type Change = Readonly<Record<(typeof CHANGE_FIELDS)[number], unknown>>

/** Each VALUES column's type: VALUES parameters have none of their own. */
const CASTS = {
  client_id: 'text',
  id: 'uuid',
  status: 'text',
  duration_s: 'float8',
  fps: 'float8',
  bytes_total: 'int8',
  metadata: 'jsonb',
  now: 'timestamptz',
} as const

/**
 * The finalize rule over a batch of changes `v`, prepared once per batch
 * size: `UPDATE episodes e ... FROM (VALUES ...) v WHERE e.id = v.id AND
 * e.client_id = v.client_id AND e.status <> 'archived'`.
 */
const finalizeRows = prepareRows(CHANGE_FIELDS, (db, rows) => {
  const values = rows.map((row) => sql`(${sql.join(CHANGE_FIELDS.map((field) => sql`${row[field]}::${sql.raw(CASTS[field])}`))})`)
  const changes = sql`(values ${sql.join(values)})`.as<'v'>(sql`v(${sql.join(CHANGE_FIELDS.map((field) => sql.ref(field)))})`)
  return db
    .updateTable('episodes as e')
    .from(changes)
    .set((eb) => {
      const stays = eb('e.status', '=', 'ready')
      return {
        status: eb.case().when(stays).then(eb.ref('e.status')).else(sql.ref<'ready' | 'failed'>('v.status')).end(),
        duration_s: eb.fn.coalesce(sql.ref<number | null>('v.duration_s'), 'e.duration_s'),
        fps: eb.fn.coalesce(sql.ref<number | null>('v.fps'), 'e.fps'),
        bytes_total: eb.fn.coalesce(sql.ref<string | null>('v.bytes_total'), 'e.bytes_total'),
        metadata: sql`coalesce(e.metadata, '{}'::jsonb) || v.metadata`,
        updated_at: eb.case().when(stays).then(eb.ref('e.updated_at')).else(sql.ref<Date>('v.now')).end(),
      }
    })
    .whereRef('e.id', '=', sql.ref('v.id'))
    .whereRef('e.client_id', '=', sql.ref('v.client_id'))
    .where('e.status', '<>', 'archived')
    // Repeated finalizes must not grow metadata past the limit one request has.
    .where(
      sql<boolean>`(v.metadata = '{}'::jsonb or octet_length((coalesce(e.metadata, '{}'::jsonb) || v.metadata)::text) <= ${sql.lit(EPISODE_METADATA_LIMIT)})`,
    )
    .returning(['e.id', 'e.status', 'e.updated_at'])
})

const toChange = ({ clientId, episodeId, change }: FinalizeItem): Change => ({
  client_id: clientId,
  id: episodeId,
  status: change.status,
  duration_s: change.durationS ?? null,
  fps: change.fps ?? null,
  bytes_total: change.bytesTotal ?? null,
  metadata: jsonText(change.metadata ?? {}),
  now: change.now,
})

/**
 * Applies finalizes in one statement, one result per item. An episode named
 * twice is updated in a later statement, because one UPDATE changes a row at
 * most once and the second merge would be lost.
 */
export async function applyFinalizes(db: Kysely<Database>, items: readonly FinalizeItem[]): Promise<(FinalizedRow | undefined)[]> {
  const results = new Array<FinalizedRow | undefined>(items.length)
  let round = items.map((item, index) => ({ item, index }))
  while (round.length > 0) {
    const ids = new Set<string>()
    const now: typeof round = []
    const later: typeof round = []
    for (const entry of round) {
      ;(ids.has(entry.item.episodeId) ? later : now).push(entry)
      ids.add(entry.item.episodeId)
    }
    const { rows } = await finalizeRows(db, now.map(({ item }) => toChange(item)))
    const byId = new Map(rows.map((row) => [row.id, row]))
    for (const { item, index } of now) results[index] = byId.get(item.episodeId)
    round = later
  }
  return results
}

/**
 * Applies a finalize. Throws not_found for an unknown or foreign episode and
 * conflict for an archived one (in which case nothing changed). `apply`
 * writes it (default: one statement now; the ingest writer batches).
 *
 * @example
 * await finalizeEpisode(db, clientId, episodeId, { status: 'ready', metadata: { done: true }, now: new Date() })
 */
export async function finalizeEpisode(
  db: Kysely<Database>,
  clientId: string,
  episodeId: string,
  change: FinalizeChange,
  apply: (item: FinalizeItem) => Promise<FinalizedRow | undefined> = async (item) => (await applyFinalizes(db, [item]))[0],
): Promise<FinalizeEpisodeResult> {
  const row = await apply({ clientId, episodeId, change })
  if (row) return { episode_id: row.id, status: row.status as 'ready' | 'failed', updated_at: iso(row.updated_at) }
  const status = await refuseArchived(db, clientId, episodeId)
  if (status === undefined) throw new EpisodicError('not_found', 'episode not found')
  // The episode is there and not archived: only the merged metadata's size kept the UPDATE off it.
  throw new EpisodicError(
    'invalid',
    `metadata: merged with the episode's stored metadata it would pass ${EPISODE_METADATA_LIMIT} bytes (as stored); nothing changed`,
  )
}

/**
 * Throws conflict when the caller's episode `episodeId` is archived: the
 * spec's answer to a finalize with any body, a malformed one included.
 * Otherwise returns its status (undefined: not the caller's, or unknown).
 */
export async function refuseArchived(db: Kysely<Database>, clientId: string, episodeId: string): Promise<string | undefined> {
  const existing = await db
    .selectFrom('episodes')
    .select('status')
    .where('id', '=', episodeId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  if (existing?.status === 'archived') throw new EpisodicError('conflict', 'episode is archived and cannot be finalized')
  return existing?.status
}
