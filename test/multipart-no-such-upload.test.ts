/**
 * Multipart calls naming an upload that does not exist (never created,
 * aborted, completed) answer 404 with S3's error name, as the contract's
 * "Upload recovery" lists it beside EntityTooSmall, InvalidPart and
 * InvalidPartOrder, which these endpoints already name in their 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from './helpers/http.ts'
import { startService, type TestService } from './helpers/service.ts'

const MiB = 1024 * 1024

describe('multipart: an unknown, aborted or completed upload', () => {
  let svc: TestService
  let key: string
  const here = (url: string, init: RequestInit) => Promise.resolve(svc.app.request(url, init))
  const api = (path: string, init: { method?: string; body?: unknown } = {}) => call(`${svc.url}${path}`, { key, ...init }, here)

  beforeAll(async () => {
    svc = await startService('pglite', { listen: false })
    key = (await svc.newTenant()).key
  }, 120_000)
  afterAll(async () => await svc?.close())

  it('answers 404 NoSuchUpload on resume, complete and abort', async () => {
    const { episode_id } = (await api('/api/ingest/episode', { body: { request_uploads: [] } })).body
    const base = `/api/ingest/episode/${episode_id}/multipart`
    const created = await api(base, { body: { kind: 'sensors', size: 6 * MiB, part_size: 5 * MiB } })
    expect(created.status).toBe(201)
    const aborted = `${base}/${encodeURIComponent(created.body.upload_id)}`
    expect((await api(aborted, { method: 'DELETE' })).status).toBe(204)
    for (const path of [aborted, `${base}/0123456789abcdef0123456789abcdef`]) {
      const replies = [
        await api(path),
        await api(`${path}/complete`, { body: { parts: [{ part_number: 1, etag: 'x' }] } }),
        await api(path, { method: 'DELETE' }),
      ]
      for (const reply of replies) {
        expect(reply.status).toBe(404)
        expect(reply.body.error).toMatch(/^NoSuchUpload: /)
      }
    }
  }, 60_000)
})
