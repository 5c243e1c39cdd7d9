/**
 * Builds the OpenAPI 3.1 document from the route table and its valibot
 * schemas (request bodies as their input type, responses as their output).
 * Nothing here is written by hand but the prose.
 */
import { toJsonSchema, type ConversionConfig, type JsonSchema } from '@valibot/to-json-schema'
import type * as v from 'valibot'
import { GUARDED_OBJECT } from '../http/fields.ts'
import { ROUTES, type RouteDoc } from './routes.ts'

const STATUS_TEXT: Record<number, string> = {
  302: 'Redirect to the signed URL',
  400: 'Body or query fails validation (the message names the field)',
  401: 'API key missing, malformed, unknown or revoked',
  403: 'Signature, expiry or Content-Type does not match (S3-style XML)',
  404: 'Not found, or not the caller’s',
  409: 'State forbids the change',
  413: 'Body over the 1 MiB limit',
  500: 'Database or storage failure; retry with backoff',
}

function jsonSchema(schema: v.GenericSchema, typeMode: 'input' | 'output'): JsonSchema {
  const config: ConversionConfig = {
    target: 'draft-2020-12',
    typeMode,
    errorMode: 'ignore',
    // Our custom schemas are "a JSON object" checks (valibot's object alone
    // takes arrays), some followed by an object schema in their pipe.
    // Custom schemas are "JSON object" guards; `objectOnly` ones stand for a known schema.
    overrideSchema: (context) => {
      if (context.valibotSchema.type !== 'custom') return undefined
      const guarded = GUARDED_OBJECT.get(context.valibotSchema)
      return guarded ? jsonSchema(guarded, typeMode) : { type: 'object' }
    },
  }
  const { $schema: _, ...rest } = toJsonSchema(schema, config) as JsonSchema & { $schema?: string }
  return rest
}

const ErrorBody = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] }

function operation(route: RouteDoc) {
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }))
  if (route.query) {
    const query = jsonSchema(route.query, 'input') as { properties?: Record<string, unknown>; required?: string[] }
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      params.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema: schema as { type: string } })
    }
  }
  const responses: Record<string, unknown> = {
    [route.success.status]: route.success.schema
      ? { description: 'Success', content: { 'application/json': { schema: jsonSchema(route.success.schema, 'output') } } }
      : { description: route.success.description ?? 'Success' },
  }
  for (const status of [...route.errors, 500]) {
    responses[status] = status === 302 || status === 403
      ? { description: STATUS_TEXT[status] }
      : { description: STATUS_TEXT[status], content: { 'application/json': { schema: ErrorBody } } }
  }
  return {
    summary: route.summary,
    tags: [route.tag],
    operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    ...(route.auth === 'apiKey' ? { security: [{ bearer: [] }, { serviceKey: [] }] } : { security: [] }),
    ...(params.length ? { parameters: params } : {}),
    ...(route.body ? { requestBody: { required: false, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } } : {}),
    responses,
  }
}

/** The OpenAPI 3.1 document of the whole API. */
export function openApiDocument(version = '0.1.0') {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method] = operation(route)
  return {
    openapi: '3.1.0',
    info: {
      title: 'episodic',
      version,
      description: 'Episode ingest with signed uploads, and the replay regression harness (eval runs, results, rollup).',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer epk_<key_id>_<secret>' },
        serviceKey: { type: 'apiKey', in: 'header', name: 'X-Service-Key' },
      },
    },
    paths,
  }
}
