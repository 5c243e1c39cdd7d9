/**
 * The contract's storage configurations and the failure rule: no object
 * storage gives `unconfigured`; an S3-compatible bucket gets path-style URLs
 * and `public_url` from S3_PUBLIC_BASE_URL; a database failure is a generic
 * 500 that is logged and leaks nothing.
 */
import { Kysely } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.ts'
import { createClient, createKey } from '../../src/admin/admin.ts'
import { pgliteDialect } from '../../src/db/pglite.ts'
import type { Database } from '../../src/db/schema.ts'
import { call } from '../helpers/http.ts'
import { openTestPGlite } from '../helpers/pglite.ts'
import { startService, type TestService } from '../helpers/service.ts'

const services: TestService[] = []
afterAll(() => Promise.all(services.map((s) => s.close())))

describe('storage configuration', () => {
  it('EPISODIC_STORAGE=none: storage "unconfigured" and no upload URLs', async () => {
    const svc = await startService('pglite', { env: { EPISODIC_STORAGE: 'none' } })
    services.push(svc)
    const { key } = await svc.newTenant()
    const reply = await call(`${svc.url}/api/ingest/episode`, { key, body: { request_uploads: ['video', 'actions'] } })
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({ status: 'recording', storage: 'unconfigured', upload_urls: [] })
    expect((await call(`${svc.url}/storage/x/y/video.mp4`)).status).toBe(404)
  })

  it('S3_*: path-style presigned PUT URLs on the bucket, public_url from S3_PUBLIC_BASE_URL', async () => {
    const svc = await startService('pglite', {
      env: {
        S3_ENDPOINT: 'https://acct.r2.cloudflarestorage.com',
        S3_BUCKET: 'episodes',
        S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_PUBLIC_BASE_URL: 'https://cdn.example.com/eps/',
      },
    })
    services.push(svc)
    const { key, clientId } = await svc.newTenant()
    const reply = await call(`${svc.url}/api/ingest/episode`, { key, body: { request_uploads: ['video'] } })
    expect(reply.body.storage).toBe('r2')
    const [entry] = reply.body.upload_urls
    const url = new URL(entry.url)
    const objectKey = `${clientId}/${reply.body.episode_id}/video.mp4`
    expect(url.origin + url.pathname).toBe(`https://acct.r2.cloudflarestorage.com/episodes/${objectKey}`)
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIDEXAMPLE\/\d{8}\/auto\/s3\/aws4_request$/)
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-type;host')
    expect(url.searchParams.get('X-Amz-Expires')).toBe('1800')
    expect(url.searchParams.has('X-Amz-Content-Sha256')).toBe(false)
    expect(entry.public_url).toBe(`https://cdn.example.com/eps/${objectKey}`)
  })

  it('built-in store: public_url from S3_PUBLIC_BASE_URL too, null without it', async () => {
    for (const [env, expected] of [[{ S3_PUBLIC_BASE_URL: 'https://cdn.example.com/objects/' }, 'https://cdn.example.com/objects/'], [{}, null]] as const) {
      const svc = await startService('pglite', { env, listen: false })
      services.push(svc)
      const { key, clientId } = await svc.newTenant()
      const reply = await call(
        `${svc.url}/api/ingest/episode`,
        { key, body: { request_uploads: ['actions'] } },
        (url, init) => Promise.resolve(svc.app.request(url, init)),
      )
      expect(reply.body.storage).toBe('r2')
      const [entry] = reply.body.upload_urls
      expect(new URL(entry.url).pathname).toBe(`/storage/${clientId}/${reply.body.episode_id}/actions.npz`)
      expect(entry.public_url).toBe(expected === null ? null : `${expected}${clientId}/${reply.body.episode_id}/actions.npz`)
    }
  })
})

describe('failures', () => {
  it('a database failure answers a generic 500 and is logged', async () => {
    const secret = 'password=hunter2 select * from api_keys'
    const broken = {
      query: () => Promise.reject(new Error(secret)),
      close: async () => {},
    }
    const errors: unknown[] = []
    const app = createApp({
      db: new Kysely<Database>({ dialect: pgliteDialect(broken) }),
      logger: { error: (_m, e) => errors.push(e) },
    })
    const reply = await app.request('/api/ingest/episode', {
      method: 'POST',
      headers: { authorization: `Bearer epk_aaaaaaaaaaaa_${'A'.repeat(43)}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(reply.status).toBe(500)
    const text = await reply.text()
    expect(JSON.parse(text)).toEqual({ error: 'internal error' })
    expect(text).not.toContain('hunter2')
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toContain('hunter2')
  })

  it('a database failure during finalize answers a generic 500, is logged, and changes nothing', async () => {
    const pg = await openTestPGlite()
    let failing = false
    const errors: unknown[] = []
    // Authentication reads api_keys and works; statements on episodes fail while `failing`.
    const flaky = {
      query: <R>(sql: string, params?: unknown[]) => {
        if (failing && /\bepisodes\b/.test(sql)) return Promise.reject(new Error('could not write block 7 of relation base/5/16384: password=hunter2'))
        return pg.query<R>(sql, params)
      },
      close: () => pg.close(),
    }
    const db = new Kysely<Database>({ dialect: pgliteDialect(flaky) })
    try {
      const app = createApp({ db, logger: { error: (_m, e) => errors.push(e) } })
      await createClient(app.deps, 'acme')
      const { key } = await createKey(app.deps, 'acme')
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
      const opened = await (await app.request('/api/ingest/episode', { method: 'POST', headers, body: '{"request_uploads":[]}' })).json()
      failing = true
      const reply = await app.request(`/api/ingest/episode/${opened.episode_id}/finalize`, { method: 'POST', headers, body: '{"duration_s":3}' })
      expect(reply.status).toBe(500)
      const text = await reply.text()
      expect(JSON.parse(text)).toEqual({ error: 'internal error' })
      expect(text).not.toContain('hunter2')
      expect(errors).toHaveLength(1)
      expect(String(errors[0])).toContain('hunter2')
      failing = false
      const record = await (await app.request(`/api/episodes/${opened.episode_id}`, { headers })).json()
      expect(record).toMatchObject({ status: 'recording', duration_s: null })
    } finally {
      await db.destroy()
    }
  })

  it('an object storage failure at open answers 500 and inserts nothing', async () => {
    const svc = await startService('pglite', {
      overrides: {
        storage: {
          presignPut: () => Promise.reject(new Error('signer exploded')),
          presignGet: () => Promise.reject(new Error('signer exploded')),
          publicUrl: () => null,
        },
      },
    })
    services.push(svc)
    const { key } = await svc.newTenant()
    const reply = await call(`${svc.url}/api/ingest/episode`, { key, body: {} })
    expect(reply.status).toBe(500)
    expect(reply.body).toEqual({ error: 'internal error' })
    expect(svc.errors).toHaveLength(1)
    const list = await call(`${svc.url}/api/episodes`, { key })
    expect(list.body.items).toEqual([])
  })

  it('a URL that fails to sign after the row is written takes the row back out (open signs and inserts at once)', async () => {
    // Signing slower than the insert, as on the Node adapter's worker thread.
    const late = () => new Promise<never>((_, reject) => setTimeout(() => reject(new Error('signer exploded late')), 50))
    const svc = await startService('pglite', {
      overrides: { storage: { presignPut: late, presignGet: late, publicUrl: () => null } },
    })
    services.push(svc)
    const { key } = await svc.newTenant()
    const reply = await call(`${svc.url}/api/ingest/episode`, { key, body: { name: 'never handed out' } })
    expect(reply.status).toBe(500)
    expect(reply.body).toEqual({ error: 'internal error' })
    expect(svc.errors).toHaveLength(1)
    const list = await call(`${svc.url}/api/episodes`, { key })
    expect(list.body.items).toEqual([])
  })
})
