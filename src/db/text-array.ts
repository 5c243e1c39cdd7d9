/**
 * PostgreSQL `text[]` in its text form, for postgres.js without
 * `fetch_types`: that option costs every new connection one extra round trip
 * (a `pg_type` query for array types), which on Workers is every request.
 * `text[]` (`episodes.artifacts`) is the only array type this project uses.
 *
 * @example
 * serializeTextArray(['video', 'a "b"']) // '{"video","a \"b\""}'
 * parseTextArray('{video,"a \"b\"",NULL}') // ['video', 'a "b"', null]
 */

/** OID of `text[]` (`_text`), fixed in every PostgreSQL catalog. */
export const TEXT_ARRAY_OID = 1009

/** A one-dimensional array literal with every element quoted (always valid input). */
export function serializeTextArray(values: readonly (string | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : `"${v.replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`
}

/**
 * Parses PostgreSQL's output for a one-dimensional `text[]`: unquoted
 * elements, double-quoted ones with backslash escapes, and `NULL`.
 */
export function parseTextArray(text: string): (string | null)[] {
  if (text.length < 2 || text[0] !== '{' || text[text.length - 1] !== '}') throw new Error(`not a text[] literal: ${text.slice(0, 40)}`)
  const out: (string | null)[] = []
  const end = text.length - 1
  let i = 1
  if (i === end) return out
  for (;;) {
    if (text[i] === '"') {
      let value = ''
      for (i++; text[i] !== '"'; i++) {
        if (i >= end) throw new Error('unterminated quoted element in text[] literal')
        if (text[i] === '\\') i++
        value += text[i]
      }
      out.push(value)
      i++
    } else {
      let j = i
      while (j < end && text[j] !== ',') j++
      const raw = text.slice(i, j)
      out.push(raw === 'NULL' ? null : raw)
      i = j
    }
    if (i === end) return out
    if (text[i] !== ',') throw new Error(`unexpected ${JSON.stringify(text[i])} in text[] literal`)
    i++
  }
}
