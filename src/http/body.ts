/**
 * Reads a JSON request body under a size limit and validates it with a valibot
 * schema, turning every way a body can be wrong into a 400 or 413 whose
 * message names the field: not JSON, not an object, wrong type, unknown
 * field, a string (or key) holding U+0000 or an unpaired UTF-16 surrogate
 * (PostgreSQL cannot store either; nothing is replaced silently), a number
 * beyond a double's range (`1e400` would be stored as null), nesting
 * deeper than the database accepts, or over the size limit; and a body
 * declared as anything but JSON gets 415.
 */
import { concatBytes } from '../bytes.ts'
import * as v from 'valibot'
import { EpisodicError } from '../errors.ts'
import { isLosslessNumber, parse as losslessParse } from 'lossless-json'
import { exactInteger, parseJson } from './json.ts'
import { textProblem } from './text.ts'

/** Default request body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024
/** JSON nesting allowed in a body (PostgreSQL's jsonb has a stack limit). */
export const MAX_JSON_DEPTH = 64

/** Stateless between calls (no `stream` option), so one serves every request. */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Reads the body as text, refusing more than `limit` bytes without buffering past it. */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length')
  let bytes: Uint8Array
  if (declared !== null) {
    // Length known and within the limit: one read, which lets adapters take
    // their fast path (@hono/node-server reads the socket directly).
    if (!(Number(declared) <= limit)) throw tooLarge(limit)
    bytes = new Uint8Array(await request.arrayBuffer())
  } else {
    bytes = await readCapped(request, limit)
  }
  try {
    return utf8.decode(bytes)
  } catch {
    throw new EpisodicError('invalid', 'body is not valid UTF-8')
  }
}

/** A body of unknown length (chunked): stream it, stopping at the limit. */
async function readCapped(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  return concatBytes(chunks)
}

function tooLarge(limit: number): EpisodicError {
  return new EpisodicError('too_large', `body exceeds the ${limit} byte limit`)
}

/**
 * Refuses a body declared as anything but JSON (contract: `application/json`,
 * a `+json` suffix or a charset are fine; no Content-Type is read as JSON).
 */
export function requireJsonContentType(request: Request): void {
  const declared = request.headers.get('content-type')
  if (declared === null || declared.trim() === '') return
  const type = declared.split(';')[0]!.trim().toLowerCase()
  if (type === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type)) return
  throw new EpisodicError('unsupported_media_type', `Content-Type must be application/json (got ${JSON.stringify(declared.slice(0, 100))})`)
}

/**
 * Parses and validates a JSON object body. An empty body counts as `{}`, since
 * every field of the ingest bodies is optional. Integers a double cannot hold
 * exactly arrive as `bigint` (see `json.ts`); only the int64 fields accept one.
 */
export async function readJsonBody<S extends v.GenericSchema>(
  request: Request,
  schema: S,
  limit = DEFAULT_BODY_LIMIT,
  options: { integers?: readonly string[] } = {},
): Promise<v.InferOutput<S>> {
  requireJsonContentType(request)
  const text = await readBodyText(request, limit)
  let value: unknown
  if (text.trim() === '') value = {}
  else {
    try {
      value = parseJson(text)
    } catch {
      throw new EpisodicError('invalid', 'body is not valid JSON')
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EpisodicError('invalid', 'body must be a JSON object')
  }
  if (options.integers) checkIntegerLiterals(text, value as Record<string, unknown>, options.integers)
  return parseBodyValue(schema, value)
}

/**
 * Top-level `fields` (int64s such as `seed`) are the integer their literal
 * denotes, never a double near it. A value that parsed to a whole double is
 * read again from its literal (lossless-json) when it may not be that
 * integer: past 2^53 (`9223372036854775000` parses to a double whose digits
 * print the same but whose value is 9223372036854774784; the field becomes
 * the literal's bigint), or written with a point or an exponent
 * (`9007199254740993.5`, `1e-400`: a fraction the double lost, refused).
 * Plain safe integers, the usual seeds, cost nothing.
 */
function checkIntegerLiterals(text: string, value: Record<string, unknown>, fields: readonly string[]): void {
  for (const field of fields) {
    const n = value[field]
    if (typeof n !== 'number' || !Number.isInteger(n)) continue // a bigint is exact; a fraction the schema refuses
    const unsafe = !Number.isSafeInteger(n)
    if (!unsafe && !new RegExp(`"${field}"\\s*:\\s*-?\\d*[.eE]`).test(text)) continue
    let literal: unknown
    try {
      literal = (losslessParse(text) as Record<string, unknown>)[field]
    } catch {
      continue // a duplicate key, say: JSON.parse's reading stands
    }
    if (!isLosslessNumber(literal)) continue
    const exact = exactInteger(literal.value)
    if (exact === undefined) throw new EpisodicError('invalid', `${field}: must be an integer`)
    if (unsafe) value[field] = exact
  }
}

/**
 * Validates a parsed body as the API does (strings anywhere, nesting depth,
 * then `schema`), so a client such as the CLI can refuse a value before
 * sending it, with the same message the service would answer.
 */
export function parseBodyValue<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  checkJsonValue(value, '', 0)
  return parseWith(schema, value)
}

/** Validates `value` with `schema`; the first issue becomes a 400 naming its path. */
export function parseWith<S extends v.GenericSchema>(schema: S, value: unknown, prefix = ''): v.InferOutput<S> {
  const result = v.safeParse(schema, value)
  if (result.success) return result.output
  throw new EpisodicError('invalid', describeIssue(result.issues[0], prefix))
}

/** Object schemas whose key issues name a missing or an unknown field. */
const OBJECT_ISSUES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest'])

/**
 * `field.sub: message`, with the key issues of object schemas spelled out:
 * valibot reports a missing required key and an unknown key of a strict
 * object with the object's own message, so those become `is required` and
 * `unknown field` (the unknown key has `expected: "never"`).
 */
export function describeIssue(issue: v.BaseIssue<unknown>, prefix = ''): string {
  const path = issuePath(issue, prefix)
  const last = issue.path?.[issue.path.length - 1]
  if (OBJECT_ISSUES.has(issue.type) && last && 'origin' in last && last.origin === 'key') {
    if (issue.expected === 'never') return `${path}: unknown field`
    if (issue.received === 'undefined') return `${path}: is required`
  }
  return path ? `${path}: ${issue.message}` : issue.message
}

/** `metadata.poses[2].x`: object keys after dots, array indexes in brackets, as `checkJsonValue` writes them. */
function issuePath(issue: v.BaseIssue<unknown>, prefix: string): string {
  let path = prefix
  for (const item of issue.path ?? []) {
    if (item.type === 'array') path += `[${String(item.key)}]`
    else path += path ? `.${String(item.key)}` : String(item.key)
  }
  return path
}

function checkJsonValue(value: unknown, path: string, depth: number): void {
  if (typeof value === 'number') {
    // JSON has no Infinity: only a literal beyond a double's range (1e400) parses to one.
    if (!Number.isFinite(value)) throw new EpisodicError('invalid', `${path || 'body'}: must be a finite number (beyond a double's range)`)
    return
  }
  if (typeof value === 'string') {
    const problem = textProblem(value)
    if (problem) throw new EpisodicError('invalid', `${path || 'body'}: ${problem}`)
    return
  }
  if (value === null || typeof value !== 'object') return
  if (depth >= MAX_JSON_DEPTH) {
    throw new EpisodicError('invalid', `${path || 'body'}: nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkJsonValue(value[i], `${path}[${i}]`, depth + 1)
    return
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key
    const problem = textProblem(key)
    if (problem) throw new EpisodicError('invalid', `${path || 'body'}: key ${JSON.stringify(key)} ${problem}`)
    checkJsonValue(item, at, depth + 1)
  }
}
