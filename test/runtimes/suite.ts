/**
 * One conformance suite for every runtime: the spec's ingest flow, auth,
 * tenancy, eval runs and the artifact route, over plain HTTP against a base
 * URL. Each test/runtimes/<runtime>.test.ts calls `describeRuntime` once; the
 * suite knows nothing about how the service was started (see harness.ts).
 *
 * Needs the real PostgreSQL server (TEST_DATABASE_URL): without it the suite
 * is skipped loudly, and under CI=true that is a failure instead.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresAvailable } from '../helpers/postgres.ts'
import { call } from '../helpers/http.ts'
import { startRuntime, type RuntimeName, type RuntimeService, type Tenant } from './harness.ts'

/** Startup plus a throwaway database stays well inside this on every runtime. */
const START_TIMEOUT_MS = 90_000

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex')

/**
 * Defines the suite for one runtime. `extra` adds runtime-specific tests that
 * need the running service (see the REPLAY HOOK in the runtime test files).
 */
export function describeRuntime(runtime: RuntimeName, extra?: (service: () => RuntimeService) => void): void {
  const run = postgresAvailable() ? describe : describe.skip
  run(`service on ${runtime} (PostgreSQL)`, () => {
    let svc: RuntimeService
    let acme: Tenant
    let globex: Tenant

    beforeAll(async () => {
      svc = await startRuntime(runtime)
      acme = await svc.newTenant()
      globex = await svc.newTenant()
    }, START_TIMEOUT_MS)
    afterAll(() => svc?.close(), START_TIMEOUT_MS)

    const api = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${svc.url}${path}`, init)
    const open = (body: unknown = {}, key = acme.key) => api('/api/ingest/episode', { key, body })
    const finalize = (id: string, body: unknown = {}, key = acme.key) => api(`/api/ingest/episode/${id}/finalize`, { key, body })
    const put = (url: string, body: BodyInit, contentType: string) => fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body })

    it('opens an episode with one signed upload URL per artifact, under its own base URL', async () => {
      const reply = await open({ name: 'pick-1', robot: 'arm', policy_version: 'v1' })
      expect(reply.status).toBe(201)
      expect(reply.body).toMatchObject({ status: 'recording', storage: 'r2' })
      expect(reply.body.episode_id).toMatch(UUID)
      expect(reply.body.upload_urls.map((u: any) => u.kind)).toEqual(['video', 'sensors', 'actions'])
      for (const entry of reply.body.upload_urls) {
        expect(entry.url.startsWith(`${svc.url}/storage/${acme.clientId}/${reply.body.episode_id}/`)).toBe(true)
        expect(new URL(entry.url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-type;host')
        expect(Date.parse(entry.expires_at) - Date.now()).toBeGreaterThan(29 * 60 * 1000)
        expect(entry.public_url).toBeNull()
      }
    })

    it('takes a signed PUT with the signed Content-Type, refuses another (403), and reads the bytes back through the artifact route', async () => {
      const opened = (await open({ request_uploads: ['actions', 'video'] })).body
      const actions = opened.upload_urls.find((u: any) => u.kind === 'actions').url
      // 3 MiB of varied bytes: large enough to arrive in many chunks.
      const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31 + (i >> 12)) & 0xff)

      const wrongType = await put(actions, bytes, 'application/json')
      expect(wrongType.status).toBe(403)
      expect(await wrongType.text()).toContain('<Code>SignatureDoesNotMatch</Code>')
      const tampered = await put(actions.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000'), bytes, 'application/octet-stream')
      expect(tampered.status).toBe(403)

      const ok = await put(actions, bytes, 'application/octet-stream')
      expect(ok.status).toBe(200)
      expect(ok.headers.get('etag')).toBe(`"${md5(bytes)}"`)
      const video = opened.upload_urls.find((u: any) => u.kind === 'video').url
      expect((await put(video, 'mp4 bytes', 'video/mp4')).status).toBe(200)

      const artifact = await api(`/api/episodes/${opened.episode_id}/artifact/actions`, { key: acme.key })
      expect(artifact.status).toBe(200)
      expect(artifact.body).toMatchObject({ episode_id: opened.episode_id, kind: 'actions' })
      const read = await fetch(artifact.body.url)
      expect(read.status).toBe(200)
      expect(read.headers.get('content-type')).toBe('application/octet-stream')
      expect(md5(new Uint8Array(await read.arrayBuffer()))).toBe(md5(bytes))

      const redirect = await api(`/api/episodes/${opened.episode_id}/artifact/video?redirect=1`, { key: acme.key })
      expect(redirect.status).toBe(302)
      const followed = await fetch(redirect.headers.get('location')!)
      expect(await followed.text()).toBe('mp4 bytes')
      expect(followed.headers.get('content-type')).toBe('video/mp4')

      expect((await api(`/api/episodes/${opened.episode_id}/artifact/sensors`, { key: acme.key })).status).toBe(404)
      expect((await api(`/api/episodes/${opened.episode_id}/artifact/actions`, { key: globex.key })).status).toBe(404)
    })

    it('finalizes with roll-ups, merges metadata per key, and repeats the same payload', async () => {
      const id = (await open({ metadata: { task: 'pick' }, request_uploads: [] })).body.episode_id
      const first = await finalize(id, { duration_s: 12.5, bytes_total: 2048, fps: 30, metadata: { success: true } })
      expect(first.status).toBe(200)
      expect(first.body).toEqual({ episode_id: id, status: 'ready', updated_at: expect.stringMatching(/\.\d{3}Z$/) })
      const again = await finalize(id, { metadata: { reward_total: 3 } })
      expect(again.body).toEqual(first.body)
      const record = await api(`/api/episodes/${id}`, { key: acme.key })
      expect(record.body).toMatchObject({ status: 'ready', duration_s: 12.5, bytes_total: 2048, fps: 30, metadata: { task: 'pick', success: true, reward_total: 3 } })

      const failed = (await open({ request_uploads: [] })).body.episode_id
      expect((await finalize(failed, { status: 'failed' })).body.status).toBe('failed')
      expect((await finalize(failed, { status: 'ready' })).body.status).toBe('ready')
    })

    it('answers 400 to a bad body and 413 to an oversized one', async () => {
      const bad = await api('/api/ingest/episode', { key: acme.key, raw: '{not json', headers: { 'content-type': 'application/json' } })
      expect(bad.status).toBe(400)
      expect(bad.body).toEqual({ error: expect.any(String) })
      expect((await open({ fps: -1 })).status).toBe(400)
      const huge = await open({ metadata: { blob: 'x'.repeat(1024 * 1024 + 10) } })
      expect(huge.status).toBe(413)
    })

    it('answers every bad key with the identical 401 and its WWW-Authenticate header', async () => {
      expect((await api('/api/ingest/episode', { key: acme.key, header: 'x-service-key', body: {} })).status).toBe(201)
      const revoked = await svc.newTenant()
      await svc.revoke(revoked.keyId)
      const replies = await Promise.all([
        api('/api/ingest/episode', { body: {} }),
        api('/api/ingest/episode', { key: 'not-a-key', body: {} }),
        api('/api/ingest/episode', { key: `${acme.key.slice(0, -4)}AAAA`, body: {} }),
        api('/api/ingest/episode', { key: revoked.key, body: {} }),
        api('/api/ingest/episode', { key: revoked.key, header: 'x-service-key', body: {} }),
        api('/api/ingest/episode/00000000-0000-4000-8000-000000000000/finalize', { body: {} }),
        api('/api/ingest/eval-run', { body: { candidate_policy_version: 'c', baseline_episode_ids: ['x'] } }),
      ])
      for (const reply of replies) {
        expect(reply.status).toBe(401)
        expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="service"')
        expect(reply.text).toBe(replies[0]!.text)
      }
    })

    it("keeps tenants apart: another client's episode answers exactly like an unknown one (404)", async () => {
      const id = (await open({ request_uploads: [] })).body.episode_id
      const foreign = await finalize(id, {}, globex.key)
      const unknown = await finalize('7d9e0a63-0000-4000-8000-000000000000', {}, globex.key)
      expect(foreign.status).toBe(404)
      expect(foreign.text).toBe(unknown.text)
      expect((await api(`/api/episodes/${id}`, { key: globex.key })).status).toBe(404)
      expect((await api(`/api/episodes/${id}`, { key: acme.key })).body.status).toBe('recording')
    })

    it('runs an eval campaign: create, upload results, finalize with the rollup', async () => {
      const baselines: string[] = []
      for (let i = 0; i < 2; i++) baselines.push((await open({ policy_version: 'base', request_uploads: [] })).body.episode_id)
      const foreignBaseline = (await open({ request_uploads: [] }, globex.key)).body.episode_id
      const refused = await api('/api/ingest/eval-run', { key: acme.key, body: { candidate_policy_version: 'cand', baseline_episode_ids: [...baselines, foreignBaseline] } })
      expect(refused.status).toBe(404)

      const created = await api('/api/ingest/eval-run', { key: acme.key, body: { candidate_policy_version: 'cand', baseline_policy_version: 'base', baseline_episode_ids: baselines } })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({ name: 'cand', status: 'pending', results: baselines.map((id) => ({ baseline_episode_id: id, status: 'pending' })) })
      const run = created.body.eval_run_id
      const metrics = { steps: 10, success_baseline: false, success_candidate: true, collision_count_baseline: 1, collision_count_candidate: 0, reward_total_baseline: 1, reward_total_candidate: 2 }
      for (const id of baselines) {
        const result = await api(`/api/ingest/eval-run/${run}/result`, { key: acme.key, body: { baseline_episode_id: id, status: 'done', metrics } })
        expect(result.status).toBe(200)
        expect(result.body).toMatchObject({ eval_run_id: run, baseline_episode_id: id, status: 'done' })
      }
      expect((await api(`/api/ingest/eval-run/${run}/result`, { key: globex.key, body: { baseline_episode_id: baselines[0], status: 'done' } })).status).toBe(404)
      expect((await api(`/api/ingest/eval-run/${run}/result`, { key: acme.key, body: { baseline_episode_id: baselines[0], status: 'done', metrics: { steps: -1 } } })).status).toBe(400)

      const done = await api(`/api/ingest/eval-run/${run}/finalize`, { key: acme.key, body: {} })
      expect(done.status).toBe(200)
      expect(done.body).toMatchObject({ eval_run_id: run, status: 'completed' })
      expect(done.body.summary).toMatchObject({
        success_rate: { baseline: 0, candidate: 1, delta: 1, delta_is_better: true },
        collision_rate: { baseline: 1, candidate: 0, delta: -1, delta_is_better: true },
        recommend: 'ship',
      })
      expect((await api(`/api/ingest/eval-run/${run}/finalize`, { key: acme.key, body: {} })).body).toEqual(done.body)
      expect((await api(`/api/ingest/eval-run/${run}/result`, { key: acme.key, body: { baseline_episode_id: baselines[0], status: 'done' } })).status).toBe(409)
      const read = await api(`/api/eval-runs/${run}`, { key: acme.key })
      expect(read.body.results.map((r: any) => r.status)).toEqual(['done', 'done'])
    })

    extra?.(() => svc)
  })
}
