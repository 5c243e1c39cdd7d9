/**
 * Conditional GET and HEAD on the built-in store (`If-Match`,
 * `If-None-Match`, `If-Modified-Since`, `If-Unmodified-Since`), evaluated as
 * RFC 9110 section 13.2.2 orders them and as S3 answers them: a failed
 * `If-Match` or `If-Unmodified-Since` is `412 PreconditionFailed`, a failed
 * `If-None-Match` or `If-Modified-Since` is `304 Not Modified`. A date
 * condition is ignored beside its ETag counterpart, when it is not a valid
 * date, or when the store does not know the object's modification time.
 *
 * @example
 * preconditions(request.headers, { etag: 'abc', lastModified }) // null: send the object
 */

/** What a precondition decides: send the object (null), or answer 304 or 412 instead. */
export type Precondition = null | 304 | 412

/** The outcome of the request's preconditions for an object with this ETag (unquoted) and modification time. */
export function preconditions(headers: Headers, object: { etag: string; lastModified?: Date }): Precondition {
  const ifMatch = headers.get('if-match')
  const seconds = object.lastModified ? Math.floor(object.lastModified.getTime() / 1000) : null
  if (ifMatch !== null) {
    // Strong comparison: a weak tag never matches.
    if (!matches(ifMatch, object.etag, false)) return 412
  } else {
    const since = dateSeconds(headers.get('if-unmodified-since'))
    if (since !== null && seconds !== null && seconds > since) return 412
  }
  const ifNoneMatch = headers.get('if-none-match')
  if (ifNoneMatch !== null) {
    if (matches(ifNoneMatch, object.etag, true)) return 304
  } else {
    const since = dateSeconds(headers.get('if-modified-since'))
    if (since !== null && seconds !== null && seconds <= since) return 304
  }
  return null
}

/** Does a `*` or a list of entity tags (`"a", W/"b"`) name this ETag? */
function matches(header: string, etag: string, weak: boolean): boolean {
  if (header.trim() === '*') return true
  for (const match of header.matchAll(/(W\/)?"([^"]*)"/g)) {
    if (match[2] === etag && (weak || !match[1])) return true
  }
  return false
}

/** An HTTP date in whole seconds since the epoch, or null when absent or not a date. */
function dateSeconds(header: string | null): number | null {
  if (header === null) return null
  const ms = Date.parse(header)
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000)
}
