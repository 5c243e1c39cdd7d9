/**
 * Keyset-paginated episode listing, newest first, per client. Shared by the
 * API (`GET /api/episodes`) and the portal.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.ts'
import { decodeCursor, toPage } from '../http/cursor.ts'
import { toEpisode } from '../ingest/episodes.ts'
import type { Episode } from '../ingest/schemas.ts'
import type { ListEpisodesInput } from './schemas.ts'

export async function listEpisodes(
  db: Kysely<Database>,
  clientId: string,
  query: ListEpisodesInput,
): Promise<{ items: Episode[]; next_cursor: string | null }> {
  let q = db.selectFrom('episodes').selectAll().where('client_id', '=', clientId)
  if (query.source) q = q.where('source', '=', query.source)
  if (query.status) q = q.where('status', '=', query.status)
  if (query.policy_version) q = q.where('policy_version', '=', query.policy_version)
  if (query.robot) q = q.where('robot', '=', query.robot)
  if (query.cursor) {
    const cursor = decodeCursor(query.cursor)
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor.createdAt, cursor.id)))
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute()
  return toPage(rows, query.limit, toEpisode)
}
