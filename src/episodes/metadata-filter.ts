/**
 * Metadata search for the episode list: query parameters `metadata.<path>=<value>`
 * become JSON containment tests on the `metadata` column (`metadata @> '{...}'`),
 * which the GIN index of migration `0007_metadata_search` answers.
 *
 * How a value matches (the same in the API and the portal):
 * - `metadata.task=reach` matches the string `"reach"`;
 * - a value that is a JSON number, `true`, `false` or `null` also matches that
 *   JSON value: `metadata.seed=5` matches `5` and `"5"`, `metadata.ok=true`
 *   matches `true` and `"true"` (a number is compared exactly as PostgreSQL's
 *   `numeric` does, so `5.0` matches `5`, and big integers keep every digit);
 * - a value in double quotes is only that string: `metadata.seed="5"` matches
 *   `"5"` and not `5`;
 * - dots go into nested objects: `metadata.arm.side=left` matches
 *   `{"arm": {"side": "left"}}`;
 * - containment means extra keys are fine, and an array value matches when it
 *   holds the value: `metadata.tags=slow` also matches `{"tags": ["slow", "wet"]}`.
 * Several parameters must all match.
 */
import { type Expression, sql, type SqlBool } from 'kysely'
import { EpisodicError } from '../errors.ts'
import { textProblem } from '../http/text.ts'

/** The query-parameter prefix of a metadata filter. */
export const METADATA_PREFIX = 'metadata.'
/** Most metadata filters one request may carry. */
export const MAX_METADATA_FILTERS = 16
const MAX_VALUE = 1000
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/** One `metadata.<path>=<value>` parameter: the documents any of which `metadata` must contain. */
export interface MetadataFilter {
  /** The parameter as given, e.g. `metadata.task`. */
  param: string
  /** Containment documents as JSON text, e.g. `{"seed":5}`, `{"seed":"5"}`, `{"seed":[5]}`. */
  documents: string[]
}

/** Splits a query into its metadata filters and the remaining parameters. */
export function splitMetadataParams(query: Record<string, string>): { filters: MetadataFilter[]; rest: Record<string, string> } {
  const filters: MetadataFilter[] = []
  const rest: Record<string, string> = {}
  for (const [name, value] of Object.entries(query)) {
    if (name.startsWith(METADATA_PREFIX)) filters.push(parseMetadataFilter(name, value))
    else rest[name] = value
  }
  if (filters.length > MAX_METADATA_FILTERS) throw new EpisodicError('invalid', `metadata: at most ${MAX_METADATA_FILTERS} metadata filters per request`)
  return { filters, rest }
}

/**
 * One filter from its parameter name and value.
 *
 * @example
 * parseMetadataFilter('metadata.seed', '5').documents // ['{"seed":"5"}', '{"seed":5}', '{"seed":["5"]}', '{"seed":[5]}']
 */
export function parseMetadataFilter(param: string, value: string): MetadataFilter {
  const path = param.slice(METADATA_PREFIX.length).split('.')
  if (path.some((segment) => segment === '')) throw new EpisodicError('invalid', `${param}: is not a metadata key path (metadata.<key>[.<key>...])`)
  for (const text of [param, value]) {
    const problem = textProblem(text)
    if (problem) throw new EpisodicError('invalid', `${param}: ${problem}`)
  }
  if ([...value].length > MAX_VALUE) throw new EpisodicError('invalid', `${param}: must be at most ${MAX_VALUE} characters`)
  const values = literals(param, value)
  // An array holding the value matches too (jsonb containment needs it wrapped in an array below the top level).
  return { param, documents: [...values, ...values.map((literal) => `[${literal}]`)].map((literal) => nest(path, literal)) }
}

/** The JSON literals a value stands for (see the module doc). */
function literals(param: string, value: string): string[] {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(value)
    } catch {
      throw new EpisodicError('invalid', `${param}: a quoted value must be a JSON string`)
    }
    // Its escapes may spell what the raw value could not hold ("\u0000", "\ud800"): PostgreSQL's jsonb refuses both.
    const problem = textProblem(parsed as string)
    if (problem) throw new EpisodicError('invalid', `${param}: ${problem}`)
    return [JSON.stringify(parsed)]
  }
  const asString = JSON.stringify(value)
  // The number's own text, not a double's rendering, so jsonb compares every digit.
  if ((JSON_NUMBER.test(value) && fitsNumeric(value)) || value === 'true' || value === 'false' || value === 'null') return [asString, value]
  return [asString]
}

/** Most digits before the decimal point, and after it, that PostgreSQL's `numeric` (and so `jsonb`) takes. */
const NUMERIC_MAX_WEIGHT = 131072
const NUMERIC_MAX_SCALE = 16383

/**
 * Whether PostgreSQL can read the JSON number `text` (`1e999999` and
 * `1e-999999` overflow `numeric`, and casting them to jsonb fails the whole
 * query as a 500). A number it cannot read is in no stored metadata either,
 * so such a value is searched as its text only.
 */
function fitsNumeric(text: string): boolean {
  const [, int = '', frac = '', exp = '0'] = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!
  const exponent = Number(exp)
  if (frac.length - exponent > NUMERIC_MAX_SCALE) return false
  const digits = (int + frac).replace(/^0+/, '')
  if (digits === '') return true // zero: only its scale matters
  // Position of the first significant digit relative to the decimal point.
  const weight = int.length + exponent - ((int + frac).length - digits.length)
  return weight <= NUMERIC_MAX_WEIGHT
}

function nest(path: string[], literal: string): string {
  return path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, literal)
}

/** `metadata` contains one of the filter's documents (a GIN-indexable condition). */
export function metadataCondition(filter: MetadataFilter): Expression<SqlBool> {
  const tests = filter.documents.map((doc) => sql<SqlBool>`metadata @> cast(${doc} as jsonb)`)
  return tests.length === 1 ? tests[0]! : sql<SqlBool>`(${sql.join(tests, sql` or `)})`
}

/**
 * The portal's free-text form of the same filters: `task=reach site=lab-2`
 * (whitespace between pairs; a quoted value is a JSON string, as in the API)
 * as `metadata.<key>` parameters.
 */
export function metadataParamsFromText(text: string): Record<string, string> {
  const pair = /([^\s="]+)=("(?:[^"\\]|\\.)*"|[^\s"]*)/g
  const out: Record<string, string> = {}
  for (const [, key, value] of text.matchAll(pair)) out[`${METADATA_PREFIX}${key}`] = value!
  const leftover = text.replace(pair, '').trim()
  if (leftover) throw new EpisodicError('invalid', `metadata: "${leftover}" is not key=value`)
  return out
}
