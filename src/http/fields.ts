/**
 * Reusable valibot field schemas with the messages clients see
 * (`<field>: <message>`). Shared by the ingest and eval-run bodies.
 */
import * as v from 'valibot'
import { EpisodicError } from '../errors.ts'
import { jsonText } from './json.ts'
import { codePointLength } from './text.ts'

/**
 * JSON Schemas of the custom schemas and actions below, for the OpenAPI
 * generator (`@valibot/to-json-schema` cannot see inside a `custom` or a
 * `check`): a schema maps to its JSON Schema, an action to the keywords it adds.
 */
export const JSON_SCHEMA_OF = new WeakMap<object, Record<string, unknown>>()

/**
 * At most `max` Unicode code points (an emoji is one character). valibot's
 * `maxLength` counts UTF-16 units and `maxGraphemes` user-perceived
 * characters; PostgreSQL and JSON Schema's `maxLength` count code points.
 */
export function maxCodePoints(max: number, message = `must be at most ${max} characters`) {
  const action = v.check<string, string>((text) => text.length <= max || codePointLength(text) <= max, message)
  JSON_SCHEMA_OF.set(action, { maxLength: max })
  return action
}

/**
 * An array whose items are all different (`key` compares them, e.g. ids
 * case-insensitively). OpenAPI: `uniqueItems`.
 */
export function distinct<T>(message: string, key: (item: T) => unknown = (item) => item) {
  const action = v.check<T[], string>((items) => new Set(items.map(key)).size === items.length, message)
  JSON_SCHEMA_OF.set(action, { uniqueItems: true })
  return action
}

/** A string of at most `max` code points. */
export const text = (max: number, message = 'must be a string') => v.pipe(v.string(message), maxCodePoints(max))

/** Optional string of at most `max` characters; null is accepted as "not set". */
export const optionalText = (max: number) => v.optional(v.nullable(text(max)))

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * The schema each `objectOnly` guard stands for, so the OpenAPI generator can
 * describe it (in input mode it would stop at the guard).
 */
export const GUARDED_OBJECT = new WeakMap<object, v.GenericSchema>()

/**
 * `schema`, but refusing arrays first: valibot's object schemas accept an
 * array as an object with no keys.
 */
export function objectOnly<S extends v.GenericSchema<Record<string, unknown>>>(schema: S, message = 'must be an object') {
  const guard = v.custom<v.InferInput<S>>(isPlainObject, message)
  GUARDED_OBJECT.set(guard, schema)
  return v.pipe(guard, schema as v.GenericSchema<v.InferInput<S>, v.InferOutput<S>>)
}

/** A JSON object (not an array, not null). */
export const jsonObject = (maxBytes?: number) =>
  v.pipe(
    v.custom<Record<string, unknown>>(isPlainObject, 'must be a JSON object'),
    v.check(
      (value) => maxBytes === undefined || new TextEncoder().encode(jsonText(value)).length <= maxBytes,
      `must be at most ${maxBytes} bytes as JSON`,
    ),
  )

const INT8_MIN = -(2 ** 63)
const INT8_MAX = 2 ** 63
const BIG_MIN = -(2n ** 63n)
const BIG_MAX = 2n ** 63n - 1n

const numberOrBigint = v.custom<number | bigint>((x) => typeof x === 'number' || typeof x === 'bigint', 'must be a number')
JSON_SCHEMA_OF.set(numberOrBigint, { type: 'integer', format: 'int64' })

/**
 * A signed 64-bit integer, exact over the whole range: the body reader hands
 * integers a double cannot hold over as `bigint` (see `json.ts`), so
 * 9223372036854775807 arrives whole. OpenAPI: `integer`, `int64`.
 */
export const int64: v.GenericSchema<number | bigint> = v.pipe(
  numberOrBigint,
  v.check((n) => typeof n === 'bigint' || Number.isInteger(n), 'must be an integer'),
  v.check((n) => (typeof n === 'bigint' ? n >= BIG_MIN && n <= BIG_MAX : n >= INT8_MIN && n < INT8_MAX), 'must be within the 64-bit integer range'),
)

/** A finite number > 0. */
export const positive = v.pipe(v.number('must be a number'), v.finite('must be finite'), v.gtValue(0, 'must be positive'))

/** A finite number >= 0. */
export const nonNegative = v.pipe(
  v.number('must be a number'),
  v.finite('must be finite'),
  v.minValue(0, 'must be at least 0'),
)

const COUNT_RULE = `must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`
const numberOrBigintCount = v.custom<number>((x) => typeof x === 'number' || typeof x === 'bigint', 'must be a number')
JSON_SCHEMA_OF.set(numberOrBigintCount, { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

/**
 * An integer from 0 to 2^53 - 1 (`bytes_total`: 8 PiB, far past any
 * episode's artifacts), so it stays a plain `number` in the TypeScript types
 * and on every reader. A bigger integer arrives from the body reader as a
 * `bigint` (see `json.ts`); it is refused with the range, not as "must be a
 * number", and a bigger integer a double holds exactly (1e20) the same way.
 */
export const nonNegativeInt = v.pipe(
  numberOrBigintCount,
  v.check((n) => typeof n === 'bigint' || Number.isInteger(n), 'must be an integer'),
  v.check((n) => n >= 0, 'must be at least 0'),
  v.check((n) => typeof n === 'number' && n <= Number.MAX_SAFE_INTEGER, COUNT_RULE),
)

/**
 * A count, size or part number the server sends: an integer >= 0. Response
 * schemas use it instead of a bare `v.number()` so the OpenAPI document says
 * `integer` (as the spec does for `better_count`, `metric_total`, `bytes_total`).
 */
export const wireCount = v.pipe(v.number(), v.integer(), v.minValue(0))

/** A UUID string, as ids are on the wire. */
export const uuid = v.pipe(v.string('must be a string'), v.uuid('must be a UUID'))

/**
 * An id in a body that names a row (a baseline episode of a run): any
 * string, since one that is not a UUID names nothing and answers 404 like an
 * unknown id, as ids in paths do (the handler checks with `isUuid` before
 * SQL sees it). OpenAPI: a UUID string.
 */
export const idString = v.string('must be a string')
JSON_SCHEMA_OF.set(idString, { type: 'string', format: 'uuid' })

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** 32 hex digits written as a UUID (8-4-4-4-12). */
export function hexUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** True when `id` is a UUID; malformed ids in paths answer 404, never reach SQL. */
export function isUuid(id: string): boolean {
  return UUID_RE.test(id)
}

/**
 * A path id as the database holds it (lower case), or the same 404 an unknown
 * id gets: a malformed id never reaches SQL and never answers differently.
 *
 * @example
 * const id = uuidParam(c.req.param('id'), 'episode not found')
 */
export function uuidParam(id: string | undefined, notFound: string): string {
  if (id === undefined || !UUID_RE.test(id)) throw new EpisodicError('not_found', notFound)
  return id.toLowerCase()
}

/** `limit` 1..200 (default 50), as a query-string integer. */
export const limitParam = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be an integer from 1 to 200'),
    v.transform(Number),
    v.minValue(1, 'must be an integer from 1 to 200'),
    v.maxValue(200, 'must be an integer from 1 to 200'),
  ),
  '50',
)
// On the wire a query string; the document describes the integer it must spell.
JSON_SCHEMA_OF.set(limitParam, { type: 'integer', minimum: 1, maximum: 200, default: 50 })
