/**
 * Opaque page cursors over (created_at, id), the keyset lists are ordered by.
 * A cursor that does not decode is a 400 naming `cursor`.
 */
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

export function decodeCursor(cursor: string): Cursor {
  try {
    const text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'))
    const [at, id] = text.split('|')
    const createdAt = new Date(at ?? '')
    if (!id || !isUuid(id) || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor')
    return { createdAt, id }
  } catch {
    throw new EpisodicError('invalid', 'cursor: is not a cursor returned by this endpoint')
  }
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
