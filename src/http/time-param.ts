/**
 * `created_after` / `created_before` query parameters: an ISO 8601 date or
 * date-time (`2026-05-01`, `2026-05-01T12:00:00Z`, `2026-05-01T14:00+02:00`).
 * A date alone is midnight UTC, and a date-time without a zone is read as
 * UTC, so a link means the same instant wherever it is opened. The range is
 * half-open: `created_after` is inclusive and `created_before` exclusive, so
 * consecutive windows neither overlap nor leave a gap.
 */
import * as v from 'valibot'

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i

/**
 * Instants a timestamptz parameter can carry as `toISOString` writes it:
 * years 0001..9999 in UTC. A zone offset can move a date-time outside
 * (`0001-01-01T00:00+01:00` is year 0, `9999-12-31T23:59-05:00` year 10000),
 * and PostgreSQL would refuse those as a 500.
 */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z')
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z')

/** The instant an ISO 8601 date or date-time names, or null when it is not one (or lies outside years 0001..9999 UTC). */
export function parseInstant(text: string): Date | null {
  const at = parseIso(text)
  return at && at.getTime() >= FIRST_INSTANT && at.getTime() <= LAST_INSTANT ? at : null
}

/** The instant an ISO 8601 date or date-time names, whatever its year, or null when it is not one. */
function parseIso(text: string): Date | null {
  const m = ISO.exec(text)
  if (!m) return null
  const [, year, month, day, hour, , , zone] = m
  // Date accepts 2026-02-31 (also 2026-02-31T00:00Z) as March 3rd; a day the month does not have is no date.
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysIn(Number(year), Number(month)) || Number(hour ?? 0) > 23) return null
  const iso = hour === undefined ? `${year}-${month}-${day}T00:00:00Z` : `${text.replace(' ', 'T')}${zone ? '' : 'Z'}`
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return null
  return at
}

/** Days in `month` (1-12) of `year`: day 0 of the next month is its last (setUTCFullYear, unlike Date.UTC, keeps years 0-99). */
function daysIn(year: number, month: number): number {
  const last = new Date(0)
  last.setUTCFullYear(year, month, 0)
  return last.getUTCDate()
}

/** An optional time-range query parameter, validated and turned into a `Date`. */
export const instantParam = v.optional(
  v.pipe(
    v.string(),
    v.check((text) => parseIso(text) !== null, 'must be an ISO 8601 date or date-time, e.g. 2026-05-01 or 2026-05-01T12:00:00Z'),
    v.check((text) => parseInstant(text) !== null, 'must lie between 0001-01-01 and 9999-12-31 (UTC)'),
    v.transform((text) => parseInstant(text)!),
  ),
)
