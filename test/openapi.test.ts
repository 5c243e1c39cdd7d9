/**
 * The OpenAPI document is generated from the route table's valibot schemas;
 * these tests check it covers every route the app really serves (and serves
 * every route it lists), and that its schemas are the validating ones.
 */
import { describe, expect, it } from 'vitest'
import { createApp } from '../src/app.ts'
import { openTestDatabase } from './helpers/pglite.ts'
import { createLocalStorage } from '../src/storage/local.ts'
import { createMemoryFiles } from '../src/storage/memory-files.ts'

const db = await openTestDatabase()
const app = createApp({ db, storage: createLocalStorage({ files: createMemoryFiles(), secret: 's' }) })
const doc = (await (await app.request('http://localhost/openapi.json')).json()) as any

const normalize = (path: string) => path.replace(/:(\w+)/g, '{}').replace(/\{\w+\}/g, '{}')

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with both key schemes', () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearer', 'serviceKey'])
  })

  it('lists every route the app serves', () => {
    const documented = new Set<string>()
    for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${normalize(path)}`)
    }
    const served = app.routes
      // app.use('*') middleware shows up as ALL .../*; the object store is the one ALL handler.
      .filter((r) => r.method !== 'ALL' || r.path === '/storage/*')
      .flatMap((r) => (r.method === 'ALL' ? ['PUT /storage/{}', 'GET /storage/{}'] : [`${r.method} ${normalize(r.path)}`]))
    expect(served.length).toBeGreaterThanOrEqual(12)
    for (const route of served) expect(documented, route).toContain(route)
    expect([...documented].sort()).toEqual([...new Set(served)].sort())
  })

  it('describes request bodies from the validating schemas', () => {
    const open = doc.paths['/api/ingest/episode'].post.requestBody.content['application/json'].schema
    expect(open.additionalProperties).toBe(false)
    expect(open.properties.name.anyOf[0]).toEqual({ type: 'string', maxLength: 200 })
    expect(open.properties.request_uploads.items.enum).toEqual(['video', 'sensors', 'actions'])
    const result = doc.paths['/api/ingest/eval-run/{eval_run_id}/result'].post.requestBody.content['application/json'].schema
    const metrics = result.properties.metrics.anyOf[0]
    expect(metrics.properties.ood_action_share_candidate.anyOf[0]).toMatchObject({ type: 'number', minimum: 0, maximum: 1 })
    // Extra metric columns are kept (contract: "Metric blob"), typed as any value.
    expect(metrics.additionalProperties).toEqual({})
    const create = doc.paths['/api/ingest/eval-run'].post.requestBody.content['application/json'].schema
    expect(create.required).toEqual(['candidate_policy_version', 'baseline_episode_ids'])
    expect(create.properties.baseline_episode_ids.maxItems).toBe(1000)
    // The server refuses repeats in these arrays; the document says so.
    expect(create.properties.baseline_episode_ids.uniqueItems).toBe(true)
    expect(open.properties.request_uploads.uniqueItems).toBe(true)
    expect(doc.paths['/api/ingest/episode/{episode_id}/upload-urls'].post.requestBody.content['application/json'].schema.properties.kinds.uniqueItems).toBe(
      true,
    )
  })

  it('marks a request body required exactly when it has required fields', () => {
    const required: Record<string, boolean> = {}
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) if (op.requestBody) required[`${method.toUpperCase()} ${path}`] = op.requestBody.required
    }
    expect(required).toMatchObject({
      'POST /api/ingest/episode': false,
      'POST /api/ingest/episode/{episode_id}/finalize': false,
      'POST /api/ingest/eval-run': true,
      'POST /api/ingest/eval-run/{eval_run_id}/result': true,
      'POST /api/ingest/episode/{episode_id}/multipart': true,
      'POST /api/ingest/episode/{episode_id}/multipart/{upload_id}/complete': true,
    })
  })

  it('explains the eval-run list filters, baselines_of above all', () => {
    const params = doc.paths['/api/eval-runs'].get.parameters as Array<{ name: string; description: string }>
    const described = Object.fromEntries(params.map((p) => [p.name, p.description]))
    expect(described.baselines_of).toMatch(/^An eval run id: /)
    for (const name of ['candidate_policy_version', 'baseline_policy_version', 'created_after', 'created_before']) expect(described[name]).not.toBe(name)
  })

  it('closes every request body to unknown keys, exactly', () => {
    const bodies: Record<string, unknown> = {}
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.requestBody?.content?.['application/json']?.schema
        if (schema) bodies[`${method.toUpperCase()} ${path}`] = schema.additionalProperties
      }
    }
    expect(bodies).toEqual({
      'POST /api/ingest/episode': false,
      'POST /api/ingest/episode/{episode_id}/finalize': false,
      'POST /api/ingest/episode/{episode_id}/multipart': false,
      'POST /api/ingest/episode/{episode_id}/multipart/{upload_id}/complete': false,
      'POST /api/ingest/episode/{episode_id}/upload-urls': false,
      'POST /api/ingest/eval-run': false,
      'POST /api/ingest/eval-run/{eval_run_id}/result': false,
      'POST /api/ingest/eval-run/{eval_run_id}/finalize': false,
    })
    expect(doc.components.schemas.Error.additionalProperties).toBe(false)
  })

  it('documents the error statuses with the error body', () => {
    const finalize = doc.paths['/api/ingest/episode/{episode_id}/finalize'].post
    expect(Object.keys(finalize.responses).sort()).toEqual(['200', '400', '401', '404', '409', '413', '415', '429', '500'])
    expect(finalize.responses['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
    expect(doc.components.schemas.Error.required).toEqual(['error'])
    expect(finalize.responses['401'].headers['WWW-Authenticate'].schema.type).toBe('string')
    const artifact = doc.paths['/api/episodes/{episode_id}/artifact/{kind}'].get
    expect(artifact.responses['302'].headers.Location.schema).toEqual({ type: 'string', format: 'uri' })
  })

  it('declares the headers the answers carry: Idempotency-Replayed, Retry-After and RateLimit-*', () => {
    const open = doc.paths['/api/ingest/episode'].post
    expect(Object.keys(open.responses['201'].headers)).toEqual(['Idempotency-Replayed', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
    expect(Object.keys(open.responses['429'].headers)).toEqual(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
    const finalize = doc.paths['/api/ingest/episode/{episode_id}/finalize'].post
    expect(finalize.responses['200'].headers['Idempotency-Replayed']).toBeUndefined()
  })

  it('says int64 for seed and counts code points in maxLength', () => {
    const open = doc.paths['/api/ingest/episode'].post.requestBody.content['application/json'].schema
    expect(JSON.stringify(open.properties.seed)).toContain('"format":"int64"')
    expect(JSON.stringify(open.properties.name)).toContain('"maxLength":200')
    expect(JSON.stringify(doc.components.schemas.Episode.properties.seed)).toContain('"format":"int64"')
  })

  it('types the counts, sizes and part numbers servers send as integers, not as any number', () => {
    // The spec types better_count, metric_total and bytes_total as integers; a schema saying
    // `number` lets a validator accept 2.5 and makes generated clients lose the rule.
    const integer = (schema: any) => {
      const types = schema.anyOf ? schema.anyOf.map((s: any) => s.type) : [schema.type]
      return types.includes('integer') && !types.includes('number')
    }
    const json = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema
    const { RollupSummary, MetricSummary, Episode, EvalRun } = doc.components.schemas
    const fields: Array<[string, any]> = [
      ['summary.better_count', RollupSummary.properties.better_count],
      ['summary.metric_total', RollupSummary.properties.metric_total],
      ['summary.min_episodes', RollupSummary.properties.min_episodes],
      ['summary.episodes_needed', RollupSummary.properties.episodes_needed],
      ['summary.action_divergence.n', RollupSummary.properties.action_divergence.properties.n],
      ...Object.entries(RollupSummary.properties.episodes.properties).map(([k, s]) => [`summary.episodes.${k}`, s] as [string, any]),
      ['metric.n', MetricSummary.properties.n],
      ['metric.candidate_source.reported', MetricSummary.properties.candidate_source.properties.reported],
      ['metric.candidate_source.recorded', MetricSummary.properties.candidate_source.properties.recorded],
      ['episode.bytes_total', Episode.properties.bytes_total],
      ['eval_run.min_episodes', EvalRun.properties.min_episodes],
    ]
    const created = json('/api/ingest/episode/{episode_id}/multipart', 'post', '201')
    const resumed = json('/api/ingest/episode/{episode_id}/multipart/{upload_id}', 'get', '200')
    fields.push(
      ['multipart.part_size', created.properties.part_size],
      ['multipart.part_count', created.properties.part_count],
      ['multipart.parts[].part_number', created.properties.parts.items.properties.part_number],
      ['resume.part_size', resumed.properties.part_size],
      ['resume.part_count', resumed.properties.part_count],
      ['resume.uploaded[].part_number', resumed.properties.uploaded.items.properties.part_number],
      ['resume.uploaded[].size', resumed.properties.uploaded.items.properties.size],
      ['resume.parts[].part_number', resumed.properties.parts.items.properties.part_number],
      ['complete.size', json('/api/ingest/episode/{episode_id}/multipart/{upload_id}/complete', 'post', '200').properties.size],
      ['artifacts[].size', json('/api/episodes/{episode_id}/artifacts', 'get', '200').properties.artifacts.items.properties.size],
    )
    expect(fields.filter(([, schema]) => !integer(schema)).map(([name]) => name)).toEqual([])
  })

  it('documents the ranged answers of the built-in store: 206 and the S3-style 416', () => {
    const get = doc.paths['/storage/{key}'].get
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '206', '403', '404', '416']))
    // Neither is the JSON error object: 206 is the bytes, 416 S3's XML InvalidRange.
    expect(get.responses['206'].content).toBeUndefined()
    expect(get.responses['416'].content).toBeUndefined()
  })

  it('names shared shapes as components and refers to them', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Episode', 'UploadUrl', 'EvalRun', 'EvalRunWithResults', 'RollupSummary', 'Error']),
    )
    const opened = doc.paths['/api/ingest/episode'].post.responses['201'].content['application/json'].schema
    expect(opened.properties.upload_urls.items).toEqual({ $ref: '#/components/schemas/UploadUrl' })
    expect(doc.paths['/api/episodes/{episode_id}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Episode' })
    const summary = doc.components.schemas.RollupSummary
    expect(summary.properties.success_rate).toEqual({ $ref: '#/components/schemas/MetricSummary' })
    // Every $ref points at a component that exists.
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/(\w+)"/g) ?? []
    for (const ref of refs) expect(doc.components.schemas).toHaveProperty(ref.slice(22, -1))
  })

  it('types free-form metadata as an object of any keys, and gives formats, servers, license and tags', () => {
    const open = doc.paths['/api/ingest/episode'].post.requestBody.content['application/json']
    expect(open.schema.properties.metadata).toEqual({ type: 'object', additionalProperties: true, default: {} })
    expect(open.example.request_uploads).toEqual(['video', 'sensors', 'actions'])
    expect(doc.components.schemas.Episode.properties.metadata.additionalProperties).toEqual({})
    expect(doc.components.schemas.Episode.properties.created_at).toEqual({ type: 'string', format: 'date-time' })
    expect(doc.components.schemas.Episode.properties.episode_id).toEqual({ type: 'string', format: 'uuid' })
    const list = doc.paths['/api/episodes'].get.parameters
    expect(list.find((p: { name: string }) => p.name === 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
    for (const p of list) expect(p.description, p.name).toBeTruthy()
    expect(doc.servers).toEqual([{ url: 'http://localhost' }])
    expect(doc.info.license.identifier).toBe('Apache-2.0')
    const tags = new Set(doc.tags.map((t: { name: string }) => t.name))
    for (const ops of Object.values<Record<string, { tags: string[]; summary: string }>>(doc.paths)) {
      for (const op of Object.values(ops)) {
        expect(tags).toContain(op.tags[0])
        expect(op.summary).toBeTruthy()
      }
    }
  })
})
