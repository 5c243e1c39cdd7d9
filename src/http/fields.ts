/**
 * Reusable valibot field schemas with the messages clients see
 * (`<field>: <message>`). Shared by the ingest and eval-run bodies.
 */
import * as v from 'valibot'

/** Optional string of at most `max` characters; null is accepted as "not set". */
export const optionalText = (max: number) =>
  v.optional(
    v.nullable(v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`))),
  )

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

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
      (value) => maxBytes === undefined || new TextEncoder().encode(JSON.stringify(value)).length <= maxBytes,
      `must be at most ${maxBytes} bytes as JSON`,
    ),
  )

const INT8_MIN = -(2 ** 63)
const INT8_MAX = 2 ** 63

/** An integer in PostgreSQL's int8 range (as far as a JSON number can carry it). */
export const int8 = v.pipe(
  v.number('must be a number'),
  v.integer('must be an integer'),
  v.check((n) => n >= INT8_MIN && n < INT8_MAX, 'must be within the 64-bit integer range'),
)

/** A finite number > 0. */
export const positive = v.pipe(v.number('must be a number'), v.finite('must be finite'), v.gtValue(0, 'must be positive'))

/** A finite number >= 0. */
export const nonNegative = v.pipe(
  v.number('must be a number'),
  v.finite('must be finite'),
  v.minValue(0, 'must be at least 0'),
)

/** An integer >= 0 that fits int8. */
export const nonNegativeInt = v.pipe(
  v.number('must be a number'),
  v.integer('must be an integer'),
  v.minValue(0, 'must be at least 0'),
  v.check((n) => n < INT8_MAX, 'must be within the 64-bit integer range'),
)

/** A UUID string, as ids are on the wire. */
export const uuid = v.pipe(v.string('must be a string'), v.uuid('must be a UUID'))

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True when `id` is a UUID; malformed ids in paths answer 404, never reach SQL. */
export function isUuid(id: string): boolean {
  return UUID_RE.test(id)
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
