/**
 * Strings PostgreSQL cannot store: U+0000 (text and jsonb refuse it) and an
 * unpaired UTF-16 surrogate (not a Unicode scalar value, so it has no UTF-8
 * form; drivers would replace it with U+FFFD or fail). The body reader and
 * the query reader refuse both with a 400 naming the field, so nothing is
 * changed silently and nothing reaches the database to fail there as a 500.
 */

const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/** Node 20+, Deno, Bun and Workers have it; the regex is the fallback. */
const wellFormed: (text: string) => boolean = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
  ? (text) => (text as string & { isWellFormed(): boolean }).isWellFormed()
  : (text) => !LONE_SURROGATE.test(text)

/** Why `text` cannot be stored (`must not contain ...`), or undefined when it can. */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain \\u0000'
  if (!wellFormed(text)) return 'must not contain an unpaired UTF-16 surrogate'
  return undefined
}

const UNPAIRED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** `text` with each unpaired UTF-16 surrogate shown as U+FFFD, so it can be stored (where refusing it is not an option). */
export function wellFormedText(text: string): string {
  return wellFormed(text) ? text : text.replace(UNPAIRED, '\ufffd')
}

/** Unicode code points in `text` (an emoji is one; a lone surrogate counts as one). */
export function codePointLength(text: string): number {
  let count = text.length
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--
        i++
      }
    }
  }
  return count
}

/**
 * The first `max` code points of `text`: a stored truncation (an eval
 * result's error) counts characters as the length rules do, and never cuts a
 * surrogate pair in half, which would leave an unpaired surrogate that
 * PostgreSQL cannot store (drivers send U+FFFD in its place).
 *
 * @example
 * truncateCodePoints('a🤖🤖', 2) // 'a🤖'
 */
export function truncateCodePoints(text: string, max: number): string {
  if (text.length <= max) return text
  let units = 0
  for (let points = 0; points < max && units < text.length; points++) {
    const unit = text.charCodeAt(units)
    const next = text.charCodeAt(units + 1)
    units += unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1
  }
  return text.slice(0, units)
}
