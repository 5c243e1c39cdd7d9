/**
 * Short episode ids: `episodic replay run` prints a replay episode as the
 * first 8 hex digits of its id (`[1/3] <baseline> -> 3f2a9c1e`), and the
 * portal resolves `/portal/episodes/3f2a9c1e` to the one episode of the
 * caller's whose id starts so. The lookup is a range on the primary key
 * (`id` between `3f2a9c1e-0000-...` and `3f2a9c1e-ffff-...`), so it uses the
 * index however many episodes there are.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.ts'
import { hexUuid } from '../http/fields.ts'

/** Prefixes from 4 to 32 hex digits (dashes as in a UUID allowed) count as short ids. */
const SHORT_ID = /^[0-9a-f]{4}[0-9a-f-]{0,32}$/i

/** The full UUID range a hex prefix covers, or null when `text` is not one. */
export function shortIdRange(text: string): { low: string; high: string } | null {
  if (!SHORT_ID.test(text)) return null
  const hex = text.toLowerCase().replaceAll('-', '')
  if (hex.length < 4 || hex.length > 32) return null
  return { low: hexUuid(hex.padEnd(32, '0')), high: hexUuid(hex.padEnd(32, 'f')) }
}

/** Ids of the caller's episodes starting with `prefix` (at most `limit`), oldest first. */
export async function episodesByShortId(
  db: Kysely<Database>,
  clientId: string,
  prefix: string,
  limit = 10,
): Promise<Array<{ id: string; name: string | null }>> {
  const range = shortIdRange(prefix)
  if (!range) return []
  return await db
    .selectFrom('episodes')
    .select(['id', 'name'])
    .where('client_id', '=', clientId)
    .where('id', '>=', range.low)
    .where('id', '<=', range.high)
    .orderBy('created_at')
    .limit(limit)
    .execute()
}
