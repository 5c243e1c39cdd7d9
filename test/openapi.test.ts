/**
 * The OpenAPI document is generated from the route table's valibot schemas;
 * these tests check it covers every route the app really serves (and serves
 * every route it lists), and that its schemas are the validating ones.
 */
import { describe, expect, it } from 'vitest'
import { createApp } from '../src/app.ts'
import { openDatabase } from '../src/db/open.ts'
import { createLocalStorage } from '../src/storage/local.ts'
import { createMemoryFiles } from '../src/storage/memory-files.ts'

const db = await openDatabase()
const app = createApp({ db, storage: createLocalStorage({ files: createMemoryFiles(), secret: 's' }) })
const doc = (await (await app.request('/openapi.json')).json()) as any

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
    expect(metrics.additionalProperties).toBeDefined()
    const create = doc.paths['/api/ingest/eval-run'].post.requestBody.content['application/json'].schema
    expect(create.required).toEqual(['candidate_policy_version', 'baseline_episode_ids'])
    expect(create.properties.baseline_episode_ids.maxItems).toBe(1000)
  })

  it('documents the error statuses with the error body', () => {
    const finalize = doc.paths['/api/ingest/episode/{episode_id}/finalize'].post
    expect(Object.keys(finalize.responses).sort()).toEqual(['200', '400', '401', '404', '409', '413', '500'])
    expect(finalize.responses['409'].content['application/json'].schema.required).toEqual(['error'])
  })
})
