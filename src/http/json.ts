/**
 * JSON without a round trip through a double where an integer can exceed
 * 2^53 (contract, "Exact integers and strings"): `seed` is a signed 64-bit
 * integer written on the wire as a plain JSON number with every digit.
 *
 * Parsing: text with no run of 16 digits (a decimal point may sit among
 * them) cannot hold an integer beyond 2^53 that a double would change
 * (9007199254740992 has 16), so it takes `JSON.parse` unchanged, which keeps
 * the open/finalize hot path as fast as before. Anything else goes through
 * lossless-json's parser, which hands every number over as its source text:
 * an integer a double cannot hold exactly becomes a `bigint`, whether it is
 * written `9007199254740993`, `9007199254740993.0` or `9.007199254740993e15`.
 *
 * Writing: `JSON.stringify` throws on a `bigint`; then (and only then) the
 * value is written by lossless-json's `stringify`, which prints a bigint as
 * its digits. Seeds beyond 2^53 are bigints on the way out (`toInt64`), so
 * `-9223372036854775808` never becomes `-9223372036854776000`.
 *
 * @example
 * parseJson('{"seed":9223372036854775807}') // { seed: 9223372036854775807n }
 * jsonText({ seed: 9223372036854775807n })  // '{"seed":9223372036854775807}'
 */
import { parse as losslessParse, stringify as losslessStringify } from 'lossless-json'

/** How integer literals beyond 2^53 come back from `parseJson`. */
export type BigIntMode =
  /** A bigint only where a double would not print these digits again (1e20 written out stays a number, 2^63 does not). */
  | 'inexact'
  /** A bigint for every integer outside ±(2^53 - 1), so printing it never rounds. */
  | 'unsafe'

/** 16 digits, perhaps with a decimal point among them: what an integer beyond 2^53 needs. */
const LONG_DIGITS = /\d(?:\.?\d){15}/

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/**
 * The exact integer a JSON number literal denotes (`12`, `1.2e1`, `12.000`),
 * or undefined for one with a fraction, or scaled past 10^400 (beyond any
 * double too: a bound on the work `1e999999999` would ask for).
 */
export function exactInteger(text: string): bigint | undefined {
  const match = NUMBER.exec(text)
  if (!match) return undefined
  const [, sign, whole, fraction = '', exponent = '0'] = match
  let digits = (whole! + fraction).replace(/^0+(?=\d)/, '')
  if (/^0+$/.test(digits)) return 0n
  let scale = Number(exponent) - fraction.length
  while (scale < 0 && digits.endsWith('0')) {
    digits = digits.slice(0, -1)
    scale++
  }
  if (scale < 0 || scale > 400) return undefined
  return BigInt(sign + digits) * 10n ** BigInt(scale)
}

const inexact = (text: string): number | bigint => {
  const n = Number(text)
  // Beyond a double's range (1e400): Infinity, as JSON.parse reads it, for the validator to refuse.
  if (!Number.isFinite(n)) return n
  const exact = exactInteger(text)
  if (exact === undefined || (Number.isSafeInteger(n) && BigInt(n) === exact)) return n
  // A number only if writing it gives back these very digits (what JSON.stringify wrote
  // for a double, 100000000000000000000 for 1e20); 2^63 and one nanosecond timestamp in
  // 256 are doubles exactly but print rounded (9223372036854776000), so they stay bigints.
  return exactInteger(String(n)) === exact ? n : exact
}

const unsafe = (text: string): number | bigint => {
  const n = Number(text)
  if (!Number.isFinite(n)) return n
  const exact = exactInteger(text)
  return exact === undefined || (Number.isSafeInteger(n) && BigInt(n) === exact) ? n : exact
}

/**
 * Parses JSON text; integers a double would change come back as `bigint`
 * (see `BigIntMode`; the server uses `inexact`, the client library `unsafe`),
 * so every integer is written back with the digits it came with. Throws a
 * SyntaxError on malformed text, as `JSON.parse` does.
 */
export function parseJson(text: string, mode: BigIntMode = 'inexact'): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text)
  return losslessParse(text, null, mode === 'inexact' ? inexact : unsafe)
}

/** `JSON.stringify(value, null, indent)`, writing a `bigint` as a JSON number with all its digits. */
export function jsonText(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent)
  } catch (error) {
    // Only a bigint (or a cycle, which lossless-json refuses as well) gets here.
    if (!(error instanceof TypeError)) throw error
    return losslessStringify(value, undefined, indent) as string
  }
}

/**
 * A stored int8 (postgres.js gives a string, PGlite a number or bigint) as
 * the wire carries it: a number inside ±(2^53 - 1), else a bigint, so that
 * writing it keeps every digit.
 */
export function toInt64(value: string | number | bigint): number | bigint {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : BigInt(value)
}

/**
 * A JSON response written with `jsonText`: the one way routes answer with
 * JSON, so a bigint anywhere in a body is written exactly.
 *
 * @example
 * return sendJson(await getEpisode(db, clientId, id))
 */
export function sendJson(value: unknown, status = 200, headers?: Record<string, string>): Response {
  return new Response(jsonText(value), { status, headers: { 'content-type': 'application/json', ...headers } })
}
