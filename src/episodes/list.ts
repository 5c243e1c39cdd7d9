/**
 * Keyset-paginated episode listing, newest first, per client. Shared by the
 * API (`GET /api/episodes`) and the portal. Metadata filters (see
 * `metadata-filter.ts`) and the created-at range narrow it.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.ts'
import { keysetPage, toPage } from '../http/cursor.ts'
import { toEpisode } from './rows.ts'
import type { Episode } from './ingest-schemas.ts'
import { metadataCondition, type MetadataFilter } from './metadata-filter.ts'
import type { ListEpisodesInput } from './schemas.ts'

export async function listEpisodes(
  db: Kysely<Database>,
  clientId: string,
  query: ListEpisodesInput,
  metadata: readonly MetadataFilter[] = [],
): Promise<{ items: Episode[]; next_cursor: string | null }> {
  let q = db.selectFrom('episodes').selectAll().where('client_id', '=', clientId)
  if (query.source) q = q.where('source', '=', query.source)
  if (query.status) q = q.where('status', '=', query.status)
  if (query.policy_version) q = q.where('policy_version', '=', query.policy_version)
  if (query.robot) q = q.where('robot', '=', query.robot)
  if (query.created_after) q = q.where('created_at', '>=', query.created_after)
  if (query.created_before) q = q.where('created_at', '<', query.created_before)
  for (const filter of metadata) q = q.where(metadataCondition(filter))
  const rows = await keysetPage(q, query.cursor, query.limit).execute()
  return toPage(rows, query.limit, toEpisode)
}
