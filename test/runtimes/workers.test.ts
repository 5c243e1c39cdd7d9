/**
 * The runtime-neutral suite against examples/workers (bundled with esbuild)
 * in workerd through Miniflare, with the Hyperdrive binding on PostgreSQL and
 * the R2 bucket emulated.
 */
import { expect, it } from 'vitest'
import { devVars } from './harness.ts'
import { describeRuntime } from './suite.ts'

describeRuntime('workers', (service) => {
  it('refuses an upload without Content-Length as S3 does (411): R2 needs the length of a streamed body', async () => {
    const tenant = await service().newTenant()
    const opened = await fetch(`${service().url}/api/ingest/episode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: '{"request_uploads":["actions"]}',
    })
    const url = ((await opened.json()) as { upload_urls: { url: string }[] }).upload_urls[0]!.url
    const chunked = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode('abc')), c.close()) })
    const reply = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: chunked, duplex: 'half' } as RequestInit)
    expect(reply.status).toBe(411)
    expect(await reply.text()).toContain('<Code>MissingContentLength</Code>')
    const sized = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'abc' })
    expect(sized.status).toBe(200)
  })

  it('runs on the secrets of examples/workers/.dev.vars.example alone (what `wrangler dev` reads)', async () => {
    expect(Object.keys(devVars()).sort()).toEqual(['EPISODIC_SESSION_SECRET', 'EPISODIC_STORAGE_SECRET'])
    const tenant = await service().newTenant()
    const opened = await service().call(`${service().url}/api/ingest/episode`, { key: tenant.key, body: { request_uploads: ['video'] } })
    expect(opened.status).toBe(201)
  })

  it('runs multipart uploads on R2 through the built-in store: parts, resume, completion, the artifact check', async () => {
    const tenant = await service().newTenant()
    const api = (path: string, body?: unknown) =>
      fetch(`${service().url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    const { episode_id: id } = (await (await api('/api/ingest/episode', { request_uploads: [] })).json()) as { episode_id: string }
    const size = 5 * 1024 * 1024 + 10
    const created = (await (await api(`/api/ingest/episode/${id}/multipart`, { kind: 'sensors', size, part_size: 5 * 1024 * 1024 })).json()) as {
      upload_id: string
      parts: { part_number: number; url: string }[]
    }
    const bytes = new Uint8Array(size).map((_, i) => i & 0xff)
    const first = await fetch(created.parts[0]!.url, { method: 'PUT', body: bytes.subarray(0, 5 * 1024 * 1024) })
    expect(first.status).toBe(200)
    const resumed = (await (await api(`/api/ingest/episode/${id}/multipart/${created.upload_id}`)).json()) as {
      uploaded: { part_number: number }[]
      parts: { url: string }[]
    }
    expect(resumed.uploaded.map((p) => p.part_number)).toEqual([1])
    const second = await fetch(resumed.parts[0]!.url, { method: 'PUT', body: bytes.subarray(5 * 1024 * 1024) })
    expect(second.status).toBe(200)
    const parts = [{ part_number: 1, etag: first.headers.get('etag')! }, { part_number: 2, etag: second.headers.get('etag')! }]
    const done = await api(`/api/ingest/episode/${id}/multipart/${created.upload_id}/complete`, { parts })
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({ kind: 'sensors', size })
    const artifacts = (await (await api(`/api/episodes/${id}/artifacts`)).json()) as { artifacts: { kind: string; present: boolean; size: number }[] }
    expect(artifacts.artifacts.find((a) => a.kind === 'sensors')).toMatchObject({ present: true, size })
  })
})
