/**
 * The served OpenAPI document as the ecosystem's own tools see it: Redocly's
 * recommended rules report no error, and a client generated from it with
 * openapi-typescript + openapi-fetch type-checks the README's flow (open with
 * metadata, upload, finalize with metadata) and refuses a wrong field.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { createApp } from '../src/app.ts'
import { openTestDatabase } from './helpers/pglite.ts'
import { createLocalStorage } from '../src/storage/local.ts'
import { createMemoryFiles } from '../src/storage/memory-files.ts'

const db = await openTestDatabase()
const app = createApp({ db, storage: createLocalStorage({ files: createMemoryFiles(), secret: 's' }) })
const text = await (await app.request('https://episodic.test/openapi.json')).text()

const SCRIPT = `
import createClient from 'openapi-fetch'
import type { components, paths } from './api.ts'

const api = createClient<paths>({ baseUrl: 'https://episodic.test', headers: { authorization: 'Bearer epk_x_y' } })
const opened = await api.POST('/api/ingest/episode', {
  body: { name: 'pick-001', robot: 'ur5e', seed: 7, fps: 30, metadata: { task: 'pick', success: true, tags: ['a'] }, request_uploads: ['video'] },
})
if (!opened.data) throw new Error(opened.error?.error)
const upload: components['schemas']['UploadUrl'] = opened.data.upload_urls[0]!
await fetch(upload.url, { method: 'PUT', headers: { 'content-type': 'video/mp4' }, body: new Uint8Array(8) })
const done = await api.POST('/api/ingest/episode/{episode_id}/finalize', {
  params: { path: { episode_id: opened.data.episode_id } },
  body: { status: 'ready', duration_s: 12.5, bytes_total: 8, metadata: { success: true, reward_total: 1.5 } },
})
const status: 'ready' | 'failed' | undefined = done.data?.status
const episode = await api.GET('/api/episodes/{episode_id}', { params: { path: { episode_id: opened.data.episode_id } } })
const record: components['schemas']['Episode'] | undefined = episode.data
const page = await api.GET('/api/episodes', { params: { query: { limit: 10, robot: 'ur5e' } } })
console.log(status, record?.metadata.task, page.data?.next_cursor)
`

/** Type-checks `files` (name -> source) in a folder under the repository, so `openapi-fetch` resolves. */
function typeErrors(files: Record<string, string>): string[] {
  mkdirSync('test-artifacts', { recursive: true })
  const dir = mkdtempSync(join('test-artifacts', 'openapi-client-'))
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source)
  const program = ts.createProgram([join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    skipLibCheck: true,
    types: [],
  })
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }')
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

describe('the OpenAPI document with third-party tools', () => {
  it('passes Redocly’s recommended rules with no error', async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config })
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
    expect(errors).toEqual([])
  })

  it('generates a client under which the README flow type-checks, and a wrong field does not', async () => {
    const types = astToString(await openapiTS(JSON.parse(text)))
    expect(types).toContain('Episode:')
    mkdirSync('test-artifacts', { recursive: true })
    writeFileSync(join('test-artifacts', 'package.json'), '{ "type": "module" }')
    expect(typeErrors({ 'api.ts': types, 'client.ts': SCRIPT })).toEqual([])
    const wrong = SCRIPT.replace("robot: 'ur5e', seed: 7", "robot: 'ur5e', seed: 'seven'")
    expect(typeErrors({ 'api.ts': types, 'client.ts': wrong }).join('\n')).toMatch(/seed|string/)
  }, 120_000)
})
