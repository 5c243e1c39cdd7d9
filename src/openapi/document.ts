/**
 * Builds the OpenAPI 3.1 document from the route table and its valibot
 * schemas (request bodies as their input type, responses as their output).
 * Nothing here is written by hand but the prose: shared response shapes
 * become named `components.schemas` referenced with `$ref`, so generated
 * clients (openapi-typescript, openapi-fetch) get named types.
 */
import { type ConversionConfig, type JsonSchema, toJsonSchema } from '@valibot/to-json-schema'
import type * as v from 'valibot'
import { GUARDED_OBJECT, JSON_SCHEMA_OF } from '../http/fields.ts'
import { VERSION } from '../version.ts'
import { COMPONENTS, PARAMETER_DOCS, type RouteDoc, ROUTES } from './routes.ts'

const STATUS_TEXT: Record<number, string> = {
  206: 'The requested byte range (Range header); Content-Range says which',
  302: 'Redirect to the signed URL',
  304: 'Not modified (If-None-Match or If-Modified-Since): no body',
  400: 'Body or query fails validation (the message names the field)',
  401: 'API key missing, malformed, unknown or revoked',
  403: 'Signature, expiry or Content-Type does not match (S3-style XML)',
  404: 'Not found, or not the caller’s',
  409: 'State forbids the change',
  411: 'Upload without a Content-Length (S3-style XML)',
  412: 'If-Match or If-Unmodified-Since did not hold (S3-style XML PreconditionFailed)',
  413: 'Body over the request size limit',
  415: 'Body declared as something other than JSON',
  416: 'Range outside the object (S3-style XML InvalidRange)',
  422: 'Idempotency key reused with another body',
  429: 'Too many requests; retry after the Retry-After header',
  500: 'Database or storage failure; retry with backoff',
}

/** Statuses whose body is not the JSON error object. */
const NOT_JSON = new Set([206, 302, 304, 403, 411, 412, 416])

/** A JSON object of any keys: `additionalProperties: true` makes generators type it `Record<string, unknown>`. */
const ANY_OBJECT: JsonSchema = { type: 'object', additionalProperties: true }

/** Component name of each shared schema, looked up while converting. */
const componentOf = new Map<v.GenericSchema, string>(Object.entries(COMPONENTS).map(([name, schema]) => [schema, name]))

/** `define`: the component's own definition (inline), not a reference to it. */
function jsonSchema(schema: v.GenericSchema, typeMode: 'input' | 'output', define = false): JsonSchema {
  const config: ConversionConfig = {
    target: 'draft-2020-12',
    typeMode,
    errorMode: 'ignore',
    overrideSchema: (context) => {
      const schemaOf = context.valibotSchema as v.GenericSchema
      // Shared output shapes become references, except the component itself.
      const name = typeMode === 'output' ? componentOf.get(schemaOf) : undefined
      if (name && !(define && schemaOf === schema)) return { $ref: `#/components/schemas/${name}` }
      const known = JSON_SCHEMA_OF.get(context.valibotSchema)
      if (known) return known as JsonSchema
      if (context.valibotSchema.type !== 'custom') return undefined
      // Custom schemas are "JSON object" guards; `objectOnly` ones stand for a known schema.
      const guarded = GUARDED_OBJECT.get(context.valibotSchema)
      return guarded ? jsonSchema(guarded, typeMode) : ANY_OBJECT
    },
    // `maxCodePoints` is a check; JSON Schema's maxLength counts code points too.
    overrideAction: (context) => {
      const keywords = JSON_SCHEMA_OF.get(context.valibotAction)
      return keywords ? ({ ...context.jsonSchema, ...keywords } as JsonSchema) : undefined
    },
  }
  const { $schema: _, ...rest } = toJsonSchema(schema, config) as JsonSchema & { $schema?: string }
  return withFormats(rest)
}

/**
 * Adds the formats the contract fixes by name: every `*_at` field is an ISO
 * 8601 timestamp, every id field (`episode_id`, `eval_run_id`, ...) a UUID.
 * valibot's output schemas here are plain strings, so the names carry it.
 */
function withFormats(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (properties) {
    for (const [name, property] of Object.entries(properties)) properties[name] = formatProperty(name, withFormats(property))
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    const inner = schema[key]
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) (schema as Record<string, unknown>)[key] = withFormats(inner as JsonSchema)
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key]
    if (Array.isArray(list)) (schema as Record<string, unknown>)[key] = list.map((s) => withFormats(s as JsonSchema))
  }
  return schema
}

function formatProperty(name: string, schema: JsonSchema): JsonSchema {
  const format = formatOf(name)
  if (!format) return schema
  if (schema.type === 'string' && !schema.format) return { ...schema, format }
  if (Array.isArray(schema.anyOf)) {
    return { ...schema, anyOf: schema.anyOf.map((s) => (typeof s === 'object' && s.type === 'string' && !s.format ? { ...s, format } : s)) }
  }
  if (name.endsWith('_ids') && schema.type === 'array' && typeof schema.items === 'object' && !Array.isArray(schema.items)) {
    return { ...schema, items: formatProperty(name.slice(0, -1), schema.items as JsonSchema) }
  }
  return schema
}

function formatOf(name: string): 'date-time' | 'uuid' | undefined {
  if (/_at$|^created_(after|before)$/.test(name)) return 'date-time'
  if (/^(episode|eval_run|baseline_episode|replay_episode|client)_ids?$/.test(name)) return 'uuid'
  return undefined
}

const ERROR_REF = { $ref: '#/components/schemas/Error' }
const WWW_AUTHENTICATE = {
  'WWW-Authenticate': { description: 'Bearer realm="service" (RFC 6750)', schema: { type: 'string', example: 'Bearer realm="service"' } },
}

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per window (IETF draft 6); only where a limit is configured', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
}

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds until a retry can succeed', schema: { type: 'integer', minimum: 1 } },
  ...RATE_LIMIT_HEADERS,
}

const IDEMPOTENCY_REPLAYED = {
  'Idempotency-Replayed': {
    description: "'true' when this is the stored answer to an earlier request with the same Idempotency-Key",
    schema: { type: 'string', enum: ['true'] },
  },
}

function parameters(route: RouteDoc) {
  const params: Array<Record<string, unknown>> = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => {
    const name = m[1]!
    return { name, in: 'path', required: true, description: PARAMETER_DOCS[name] ?? name, schema: formatProperty(name, { type: 'string' }) }
  })
  if (route.query) {
    const query = jsonSchema(route.query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] }
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      params.push({
        name,
        in: 'query',
        required: query.required?.includes(name) ?? false,
        description: PARAMETER_DOCS[name] ?? name,
        schema,
      })
    }
  }
  for (const header of route.headers ?? []) {
    params.push({ name: header.name, in: 'header', required: false, description: header.description, schema: header.schema })
  }
  return params
}

function operation(route: RouteDoc) {
  const params = parameters(route)
  const success = route.success
  const successHeaders = route.headers?.some((h) => h.name === 'Idempotency-Key') ? IDEMPOTENCY_REPLAYED : undefined
  const responses: Record<string, unknown> = {
    [success.status]: {
      description: success.description ?? 'Success',
      ...(success.schema ? { content: { 'application/json': { schema: jsonSchema(success.schema, 'output') } } } : {}),
      ...(route.path.startsWith('/api/') ? { headers: { ...successHeaders, ...RATE_LIMIT_HEADERS } } : successHeaders ? { headers: successHeaders } : {}),
    },
  }
  const errors = new Set(route.errors)
  if (route.body) errors.add(413)
  for (const status of [...errors, 500].sort((a, b) => a - b)) {
    const response: Record<string, unknown> = { description: STATUS_TEXT[status] ?? String(status) }
    if (!NOT_JSON.has(status)) response.content = { 'application/json': { schema: ERROR_REF } }
    if (status === 401) response.headers = WWW_AUTHENTICATE
    if (status === 429) response.headers = RETRY_AFTER
    if (status === 302) response.headers = { Location: { description: 'The signed URL', schema: { type: 'string', format: 'uri' } } }
    responses[status] = response
  }
  const body = route.body && jsonSchema(route.body, 'input')
  return {
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    ...(route.auth === 'apiKey' ? { security: [{ bearer: [] }, { serviceKey: [] }] } : { security: [] }),
    ...(params.length ? { parameters: params } : {}),
    ...(body
      ? {
        requestBody: {
          // Optional only when every field is (open and finalize take `{}` or no body at all).
          required: ((body as { required?: string[] }).required?.length ?? 0) > 0,
          content: { 'application/json': { schema: body, ...(route.example ? { example: route.example } : {}) } },
        },
      }
      : {}),
    responses,
  }
}

const TAGS = [
  { name: 'ingest', description: 'Open an episode, upload its artifacts through signed URLs, finalize it.' },
  { name: 'uploads', description: 'Upload recovery: fresh URLs, multipart uploads up to 5 TiB (create, resume, complete, abort).' },
  { name: 'episodes', description: 'Read episodes and mint signed URLs for their artifacts.' },
  { name: 'eval', description: 'Replay regression harness: eval runs, per-episode results, rollup.' },
  { name: 'storage', description: 'The built-in object store (S3-style presigned requests).' },
  { name: 'meta', description: 'Liveness and this document.' },
]

/** The OpenAPI 3.1 document of the whole API (the app adds `servers`: where it answers). */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method] = operation(route)
  const schemas: Record<string, JsonSchema> = {
    Error: {
      type: 'object',
      properties: { error: { type: 'string', description: 'What went wrong; names the field when a body fails validation.' } },
      required: ['error'],
      additionalProperties: false,
    },
  }
  for (const [name, schema] of Object.entries(COMPONENTS)) schemas[name] = jsonSchema(schema, 'output', true)
  return {
    openapi: '3.1.0',
    info: {
      title: 'episodic',
      version: VERSION,
      description: 'Episode ingest with signed uploads, and the replay regression harness (eval runs, results, rollup).',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: TAGS,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer epk_<key_id>_<secret>' },
        serviceKey: { type: 'apiKey', in: 'header', name: 'X-Service-Key', description: 'The same API key in its own header' },
      },
    },
    paths,
  }
}
