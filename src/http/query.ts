/**
 * Query strings read strictly (contract, "Exact integers and strings"): a
 * parameter holding `\u0000`, an unpaired surrogate or percent-escapes that
 * are not UTF-8 is a 400 naming it. `URLSearchParams` would turn bad escapes
 * into U+FFFD silently, and a `\u0000` would reach PostgreSQL and fail there
 * as a 500; the API's list endpoints and the portal's pages both read their
 * query through here.
 *
 * @example
 * const query = readQuery(c.req.url, ListEpisodesQuery)
 */
import type * as v from 'valibot'
import { EpisodicError } from '../errors.ts'
import { parseWith } from './body.ts'
import { textProblem } from './text.ts'

function decode(raw: string, what: string): string {
  let text: string
  try {
    text = decodeURIComponent(raw.replace(/\+/g, ' '))
  } catch {
    // decodeURIComponent refuses escapes that are not UTF-8, surrogates (%ED%A0%80) included.
    throw new EpisodicError('invalid', `${what}: must be percent-encoded UTF-8 (no unpaired UTF-16 surrogate)`)
  }
  const problem = textProblem(text)
  if (problem) throw new EpisodicError('invalid', `${what}: ${problem}`)
  return text
}

/** The query parameters of `url` (the first of repeated names), each checked as above. */
export function queryParams(url: string): Record<string, string> {
  const params: Record<string, string> = {}
  const start = url.indexOf('?')
  if (start < 0) return params
  const end = url.indexOf('#', start)
  for (const part of url.slice(start + 1, end < 0 ? undefined : end).split('&')) {
    if (part === '') continue
    const eq = part.indexOf('=')
    const name = decode(eq < 0 ? part : part.slice(0, eq), 'query parameter name')
    const value = decode(eq < 0 ? '' : part.slice(eq + 1), name)
    if (!(name in params)) params[name] = value
  }
  return params
}

/** The query of `url` validated by `schema`, as a 400 naming the parameter when it fails. */
export function readQuery<S extends v.GenericSchema>(
  url: string,
  schema: S,
  select: (params: Record<string, string>) => Record<string, string> = (p) => p,
): v.InferOutput<S> {
  return parseWith(schema, select(queryParams(url)))
}
