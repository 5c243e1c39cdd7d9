/**
 * An Idempotency-Key replay answers as the first request did (contract,
 * "Safe retries"), digit for digit: integers beyond 2^53 in eval-run
 * metadata are kept exactly (contract, "Exact integers and strings";
 * docs/hardening.md), so the replayed body must not round them through a
 * double. Found by a black-box audit: the first answer said
 * 1732560000123456789, the replay 1732560000123456800.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startService, type TestService } from './helpers/service.ts'

describe('Idempotency-Key replay keeps every digit', () => {
  let svc: TestService
  let key: string
  let baseline: string
  const here = (path: string, body: string, headers: Record<string, string>) =>
    Promise.resolve(
      svc.app.request(`${svc.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body,
      }),
    )

  beforeAll(async () => {
    svc = await startService('pglite', { listen: false })
    key = (await svc.newTenant()).key
    const opened = await here('/api/ingest/episode', '{"request_uploads":[]}', {})
    baseline = ((await opened.json()) as { episode_id: string }).episode_id
  }, 120_000)
  afterAll(async () => await svc?.close())

  it('replays an eval-run create with a 64-bit integer in its metadata byte for byte', async () => {
    const body = `{"candidate_policy_version":"v2","baseline_episode_ids":["${baseline}"],"metadata":{"start_ns":1732560000123456789}}`
    const headers = { 'idempotency-key': `exact-${Math.random()}` }
    const first = await here('/api/ingest/eval-run', body, headers)
    const firstText = await first.text()
    expect(first.status).toBe(201)
    expect(firstText).toContain('"start_ns":1732560000123456789')
    const again = await here('/api/ingest/eval-run', body, headers)
    const againText = await again.text()
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotency-replayed')).toBe('true')
    expect(again.headers.get('content-type')).toMatch(/^application\/json/)
    expect(againText).toBe(firstText)
  }, 60_000)

  it('refuses a body declared as anything but JSON with 415, replay or not', async () => {
    const headers = { 'idempotency-key': `typed-${Math.random()}` }
    expect((await here('/api/ingest/episode', '{"request_uploads":[]}', headers)).status).toBe(201)
    const plain = await here('/api/ingest/episode', '{"request_uploads":[]}', { ...headers, 'content-type': 'text/plain' })
    expect(plain.status).toBe(415)
    expect(plain.headers.get('idempotency-replayed')).toBeNull()
  }, 60_000)
})
