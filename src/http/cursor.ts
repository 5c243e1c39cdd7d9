/**
 * Opaque page cursors over (created_at, id), the keyset lists are ordered by.
 * A cursor that does not decode, or decodes to a time PostgreSQL cannot take
 * (year 0, year 10000: `toISOString` writes those as `0000-...` and
 * `+010000-...`), is a 400 naming `cursor`, never a 500 from the database.
 */
import { type SelectQueryBuilder, sql } from 'kysely'
import { EpisodicError } from '../errors.ts'
import { isUuid } from './fields.ts'

export interface Cursor {
  createdAt: Date
  id: string
}

export function encodeCursor(createdAt: Date | string, id: string): string {
  const text = `${new Date(createdAt).toISOString()}|${id}`
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** A time as `encodeCursor` writes it: years 0001..9999, UTC, milliseconds. */
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

export function decodeCursor(cursor: string): Cursor {
  try {
    const text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'))
    const [at, id] = text.split('|')
    if (!at || !CURSOR_TIME.test(at) || at.startsWith('0000')) throw new Error('bad cursor time')
    const createdAt = new Date(at)
    if (!id || !isUuid(id) || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor')
    // Only what encodeCursor writes: no rolled-over time (2026-02-30, 24:00), no extra field.
    if (encodeCursor(createdAt, id) !== cursor.replace(/=+$/, '')) throw new Error('not a cursor this service wrote')
    return { createdAt, id }
  } catch {
    throw new EpisodicError('invalid', 'cursor: is not a cursor returned by this endpoint')
  }
}

/**
 * Narrows a newest-first listing to the rows after `cursor` (when given), in
 * (created_at, id) descending order, fetching one row more than `limit` so
 * `toPage` can tell whether another page follows.
 *
 * @example
 * const rows = await keysetPage(db.selectFrom('episodes').selectAll(), query.cursor, query.limit).execute()
 * return toPage(rows, query.limit, toEpisode)
 */
export function keysetPage<QB extends SelectQueryBuilder<any, any, any>>(query: QB, cursor: string | undefined, limit: number): QB {
  let q = query
  if (cursor !== undefined) {
    const after = decodeCursor(cursor)
    q = q.where(sql<boolean>`(created_at, id) < (${after.createdAt}, ${after.id})`) as QB
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1) as QB
}

/**
 * One page of a keyset listing: rows fetched with `limit + 1`, ordered by
 * (created_at, id) descending, become the page and the cursor of the next one.
 */
export function toPage<R extends { created_at: Date | string; id: string }, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
): { items: T[]; next_cursor: string | null } {
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return { items: page.map(map), next_cursor: rows.length > limit && last ? encodeCursor(last.created_at, last.id) : null }
}
