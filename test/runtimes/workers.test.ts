/**
 * The runtime-neutral suite against examples/workers (bundled with esbuild)
 * in workerd through Miniflare, with the Hyperdrive binding on PostgreSQL and
 * the R2 bucket emulated.
 */
import { expect, it } from 'vitest'
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
})
