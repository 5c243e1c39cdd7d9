/**
 * The runtime-neutral suite against examples/bun/server.ts run by `bun` from npm on PostgreSQL,
 * and what only Bun's server could get wrong: its own request-size limit in front of the app.
 */
import { expect, it } from 'vitest'
import { declaredPut } from '../helpers/http.ts'
import { replayClientTest } from './replay.ts'
import { describeRuntime } from './suite.ts'

describeRuntime('bun', (service) => {
  replayClientTest('bun', service)

  it("answers a single PUT declared over 5 GiB with S3's 400 EntityTooLarge, not Bun's bare 413", async () => {
    const svc = service()
    const tenant = await svc.newTenant()
    const opened = await svc.call(`${svc.url}/api/ingest/episode`, { key: tenant.key, body: { request_uploads: ['video'] } })
    const reply = await declaredPut(opened.body.upload_urls[0].url, { 'content-type': 'video/mp4', 'content-length': String(5 * 1024 ** 3 + 1) })
    expect(reply.status).toBe(400)
    expect(reply.text).toContain('<Code>EntityTooLarge</Code>')
  }, 60_000)
})
