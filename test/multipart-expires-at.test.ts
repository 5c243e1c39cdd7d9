/**
 * `expires_at` of multipart part URLs is when they stop working, as for the
 * `upload_urls` of open: X-Amz-Date carries whole seconds, so a URL minted at
 * 12:00:00.900 expires at 12:30:00.000, not 12:30:00.900. A later
 * `expires_at` would tell a client it may still send a part the store
 * already refuses as expired.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from './helpers/http.ts'
import { startService, type TestService } from './helpers/service.ts'

const MiB = 1024 * 1024
const minted = new Date('2030-01-01T12:00:00.900Z')

/** The instant a presigned URL expires: X-Amz-Date plus X-Amz-Expires. */
function urlExpiry(url: string): string {
  const q = new URL(url).searchParams
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(q.get('X-Amz-Date')!)!
  const signedAt = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)
  return new Date(signedAt + Number(q.get('X-Amz-Expires')) * 1000).toISOString()
}

describe('multipart expires_at', () => {
  let svc: TestService
  let key: string
  const here = (url: string, init: RequestInit) => Promise.resolve(svc.app.request(url, init))
  const api = (path: string, init: { method?: string; body?: unknown } = {}) => call(`${svc.url}${path}`, { key, ...init }, here)

  beforeAll(async () => {
    svc = await startService('pglite', { listen: false, overrides: { clock: { now: () => new Date(minted) } } })
    key = (await svc.newTenant()).key
  }, 120_000)
  afterAll(async () => await svc?.close())

  it('is the instant the part URLs expire, on create and on resume, as for open', async () => {
    const opened = await api('/api/ingest/episode', { body: { request_uploads: ['video'] } })
    expect(opened.body.upload_urls[0].expires_at).toBe(urlExpiry(opened.body.upload_urls[0].url))
    const base = `/api/ingest/episode/${opened.body.episode_id}/multipart`
    const created = await api(base, { body: { kind: 'sensors', size: 6 * MiB, part_size: 5 * MiB } })
    expect(created.status).toBe(201)
    expect(created.body.expires_at).toBe('2030-01-01T12:30:00.000Z')
    for (const part of created.body.parts) expect(urlExpiry(part.url)).toBe(created.body.expires_at)
    const resumed = await api(`${base}/${encodeURIComponent(created.body.upload_id)}`)
    expect(resumed.status).toBe(200)
    expect(resumed.body.expires_at).toBe('2030-01-01T12:30:00.000Z')
    for (const part of resumed.body.parts) expect(urlExpiry(part.url)).toBe(resumed.body.expires_at)
  })
})
