/**
 * Conformance of upload recovery (contract, "Upload recovery") over HTTP:
 * fresh URLs, multipart create/resume/complete/abort, Idempotency-Key, the
 * artifact check and verify_artifacts. Every case runs on the built-in store
 * (PGlite, and PostgreSQL when configured) and on a real S3 server (Ceph's
 * RADOS Gateway, see test/helpers/s3-server.ts), which checks SigV4 itself.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cp, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATABASES } from '../helpers/databases.ts'
import { call, declaredPut } from '../helpers/http.ts'
import { type S3Server, s3ServerAvailable, startS3Server } from '../helpers/s3-server.ts'
import { type DatabaseKind, startService, type TestService } from '../helpers/service.ts'
import { objectKey } from '../../src/storage/types.ts'

const MiB = 1024 * 1024
const TIMEOUT = 240_000

type Target = { db: DatabaseKind; store: 'built-in' | 's3' }
const TARGETS: Target[] = [
  ...DATABASES.map((db) => ({ db, store: 'built-in' as const })),
  ...(s3ServerAvailable() ? [{ db: 'pglite' as const, store: 's3' as const }] : []),
]

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest()

/** Bytes whose content says where they came from, so a wrong join shows. */
function bytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size)
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed * 7) & 0xff
  return out
}

async function put(url: string, body: Uint8Array, contentType?: string) {
  const response = await fetch(url, { method: 'PUT', body: body as Uint8Array<ArrayBuffer>, headers: contentType ? { 'content-type': contentType } : {} })
  const text = await response.text()
  return { status: response.status, etag: response.headers.get('etag'), code: /<Code>(.*?)<\/Code>/.exec(text)?.[1], text }
}

/**
 * A PUT that dies mid-body, as when the uploader's process is killed: the
 * length is declared, part of the body is sent, then the connection drops.
 */
function crashMidPut(url: string, declared: number, sent: number): Promise<void> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method: 'PUT', headers: { 'content-length': String(declared) } })
    req.on('error', () => resolve())
    req.on('response', (res) => (res.resume(), resolve()))
    req.write(Buffer.alloc(sent, 1), () => setTimeout(() => (req.destroy(), resolve()), 200))
  })
}

describe.each(TARGETS)('upload recovery on $db with the $store store', ({ db, store }) => {
  let svc: TestService
  let s3: S3Server | undefined
  let key: string
  let clientId: string
  let other: string

  beforeAll(async () => {
    if (store === 's3') s3 = await startS3Server()
    svc = await startService(db, { env: s3?.env })
    ;({ key, clientId } = await svc.newTenant('acme'))
    other = (await svc.newTenant('globex')).key
  }, TIMEOUT)
  afterAll(async () => {
    await svc?.close()
    await s3?.stop()
  }, TIMEOUT)

  const api = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${svc.url}${path}`, { key, ...init })
  const open = async (body: unknown = {}) => {
    const reply = await api('/api/ingest/episode', { body })
    expect(reply.status).toBe(201)
    return reply.body as { episode_id: string; upload_urls: { kind: string; url: string; expires_at: string }[] }
  }
  const ep = (id: string) => `/api/ingest/episode/${id}`

  describe('the artifact route followed with the API key', () => {
    it('reads the object back through ?redirect=1 when the client keeps its Authorization header', async () => {
      const { episode_id: id, upload_urls } = await open({ request_uploads: ['actions'] })
      expect((await put(upload_urls[0]!.url, bytes(10, 5), 'application/octet-stream')).status).toBe(200)
      // fetch (like curl -L and Python requests) keeps Authorization on a same-origin redirect,
      // which the built-in store is; to S3 it is dropped.
      const followed = await fetch(`${svc.url}/api/episodes/${id}/artifact/actions?redirect=1`, { headers: { authorization: `Bearer ${key}` } })
      expect(followed.status).toBe(200)
      expect(new Uint8Array(await followed.arrayBuffer())).toEqual(bytes(10, 5))
    }, TIMEOUT)

    it('answers conditional GETs on the signed URL alike: 304 for a current ETag or date, 412 for a stale one', async () => {
      const { episode_id: id, upload_urls } = await open({ request_uploads: ['actions'] })
      expect((await put(upload_urls[0]!.url, bytes(10, 7), 'application/octet-stream')).status).toBe(200)
      const { url } = (await api(`/api/episodes/${id}/artifact/actions`)).body as { url: string }
      const first = await fetch(url)
      const etag = first.headers.get('etag')!
      const lastModified = first.headers.get('last-modified')!
      await first.arrayBuffer()
      expect([first.status, Number.isNaN(Date.parse(lastModified))]).toEqual([200, false])
      const ask = async (headers: Record<string, string>) => {
        const reply = await fetch(url, { headers })
        await reply.arrayBuffer()
        return reply.status
      }
      expect(await ask({ 'if-none-match': etag })).toBe(304)
      expect(await ask({ 'if-none-match': '"0123456789abcdef0123456789abcdef"' })).toBe(200)
      expect(await ask({ 'if-match': etag })).toBe(200)
      expect(await ask({ 'if-match': '"0123456789abcdef0123456789abcdef"' })).toBe(412)
      expect(await ask({ 'if-modified-since': lastModified })).toBe(304)
      expect(await ask({ 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' })).toBe(412)
    }, TIMEOUT)
  })

  describe('fresh upload URLs', () => {
    it('mints URLs for the kinds requested at open, and adds a new kind when asked', async () => {
      const { episode_id: id } = await open({ request_uploads: ['actions'] })
      const fresh = await api(`${ep(id)}/upload-urls`, { body: {} })
      expect(fresh.status).toBe(200)
      expect(fresh.body.episode_id).toBe(id)
      expect(fresh.body.upload_urls.map((u: { kind: string }) => u.kind)).toEqual(['actions'])
      expect(Date.parse(fresh.body.upload_urls[0].expires_at) - Date.now()).toBeGreaterThan(29 * 60_000)
      expect((await put(fresh.body.upload_urls[0].url, bytes(10, 1), 'application/octet-stream')).status).toBe(200)

      const video = await api(`${ep(id)}/upload-urls`, { body: { kinds: ['video'] } })
      expect(video.body.upload_urls.map((u: { kind: string }) => u.kind)).toEqual(['video'])
      expect((await api(`/api/episodes/${id}`)).body.artifacts).toEqual(['actions', 'video'])
    }, TIMEOUT)

    it('refuses a wrong Content-Type with 403 (the store checks the signature)', async () => {
      const { upload_urls } = await open({ request_uploads: ['video'] })
      const refused = await put(upload_urls[0]!.url, bytes(10, 2), 'application/octet-stream')
      expect(refused.status).toBe(403)
      expect(refused.code).toBe('SignatureDoesNotMatch')
    }, TIMEOUT)

    it('answers 409 for ready and archived episodes, 404 for foreign, unknown and malformed ids, 200 for failed', async () => {
      const ready = await open({ request_uploads: [] })
      await api(`${ep(ready.episode_id)}/finalize`, { body: {} })
      expect((await api(`${ep(ready.episode_id)}/upload-urls`, { body: {} })).status).toBe(409)
      const archived = await open({ request_uploads: [] })
      await svc.archive(archived.episode_id)
      expect((await api(`${ep(archived.episode_id)}/upload-urls`, { body: {} })).status).toBe(409)
      const failed = await open({ request_uploads: ['sensors'] })
      await api(`${ep(failed.episode_id)}/finalize`, { body: { status: 'failed' } })
      expect((await api(`${ep(failed.episode_id)}/upload-urls`, { body: {} })).status).toBe(200)

      const foreign = await api(`${ep(failed.episode_id)}/upload-urls`, { key: other, body: {} })
      const unknown = await api(`${ep('00000000-0000-4000-8000-000000000000')}/upload-urls`, { body: {} })
      const malformed = await api(`${ep('not-a-uuid')}/upload-urls`, { body: {} })
      for (const reply of [foreign, unknown, malformed]) {
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: 'episode not found' })
      }
      expect((await api(`${ep(failed.episode_id)}/upload-urls`, { body: { kinds: ['lidar'] } })).status).toBe(400)
    }, TIMEOUT)

    it.runIf(store === 'built-in')('gives working URLs after the first ones expired', async () => {
      const { episode_id: id, upload_urls } = await open({ request_uploads: ['sensors'] })
      svc.advance(31 * 60_000)
      const expired = await put(upload_urls[0]!.url, bytes(10, 3), 'application/octet-stream')
      expect(expired).toMatchObject({ status: 403, code: 'AccessDenied' })
      expect(expired.text).toContain('Request has expired')
      const fresh = await api(`${ep(id)}/upload-urls`, { body: {} })
      expect((await put(fresh.body.upload_urls[0].url, bytes(10, 3), 'application/octet-stream')).status).toBe(200)
    }, TIMEOUT)
  })

  describe('multipart uploads', () => {
    const partSize = 5 * MiB
    const whole = bytes(partSize + 1234, 4)
    const pieces = [whole.subarray(0, partSize), whole.subarray(partSize)]

    it('creates, survives a crash mid-part, resumes with the parts stored, and completes', async () => {
      const { episode_id: id } = await open({ request_uploads: [] })
      const created = await api(`${ep(id)}/multipart`, { body: { kind: 'video', size: whole.byteLength, part_size: partSize } })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({ episode_id: id, kind: 'video', part_size: partSize, part_count: 2 })
      expect(created.body.parts.map((p: { part_number: number }) => p.part_number)).toEqual([1, 2])
      expect(typeof created.body.upload_id).toBe('string')
      const uploadId = created.body.upload_id as string
      const first = await put(created.body.parts[0].url, pieces[0]!)
      expect(first.status).toBe(200)
      await crashMidPut(created.body.parts[1].url, pieces[1]!.byteLength + MiB, 512 * 1024)

      const resumed = await api(`${ep(id)}/multipart/${encodeURIComponent(uploadId)}`)
      expect(resumed.status).toBe(200)
      expect(resumed.body).toMatchObject({ upload_id: uploadId, kind: 'video', part_size: partSize, part_count: 2 })
      expect(resumed.body.uploaded).toEqual([{ part_number: 1, size: partSize, etag: first.etag!.replace(/"/g, '') }])
      expect(resumed.body.parts.map((p: { part_number: number }) => p.part_number)).toEqual([2])
      const second = await put(resumed.body.parts[0].url, pieces[1]!)
      expect(second.status).toBe(200)

      const parts = [
        { part_number: 1, etag: first.etag! },
        { part_number: 2, etag: second.etag! },
      ]
      const done = await api(`${ep(id)}/multipart/${encodeURIComponent(uploadId)}/complete`, { body: { parts } })
      expect(done.status).toBe(200)
      expect(done.body).toMatchObject({ episode_id: id, kind: 'video', size: whole.byteLength })
      // S3's multipart ETag: the MD5 of the parts' MD5s, then the count; each part's ETag is its MD5.
      expect([first.etag, second.etag]).toEqual(pieces.map((piece) => `"${md5(piece).toString('hex')}"`))
      expect(done.body.etag.replace(/"/g, '')).toBe(`${md5(Buffer.concat(pieces.map((piece) => md5(piece)))).toString('hex')}-2`)

      const artifacts = await api(`/api/episodes/${id}/artifacts`)
      expect(artifacts.body.artifacts[0]).toMatchObject({ kind: 'video', requested: true, present: true, size: whole.byteLength, content_type: 'video/mp4' })
      const link = await api(`/api/episodes/${id}/artifact/video`)
      const downloaded = new Uint8Array(await (await fetch(link.body.url)).arrayBuffer())
      expect(downloaded.byteLength).toBe(whole.byteLength)
      expect(Buffer.compare(Buffer.from(downloaded), Buffer.from(whole))).toBe(0)
      // The upload is finished: it can be neither resumed nor completed again.
      expect((await api(`${ep(id)}/multipart/${encodeURIComponent(uploadId)}`)).status).toBe(404)
    }, TIMEOUT)

    it("refuses parts out of order, an unknown ETag, and a part under 5 MiB that is not the last, with S3's codes", async () => {
      const { episode_id: id } = await open({ request_uploads: [] })
      const created = await api(`${ep(id)}/multipart`, { body: { kind: 'actions', size: 2 * partSize, part_size: partSize } })
      const uploadId = encodeURIComponent(created.body.upload_id)
      const small = await put(created.body.parts[0].url, bytes(MiB, 5))
      const last = await put(created.body.parts[1].url, bytes(MiB, 6))
      const complete = (parts: { part_number: number; etag: string }[]) => api(`${ep(id)}/multipart/${uploadId}/complete`, { body: { parts } })

      const order = await complete([{ part_number: 2, etag: last.etag! }, { part_number: 1, etag: small.etag! }])
      expect(order.status).toBe(400)
      expect(order.body.error).toContain('InvalidPartOrder')
      // One part (the last may be small), with an ETag the store never gave.
      const unknown = await complete([{ part_number: 2, etag: '"0123456789abcdef0123456789abcdef"' }])
      expect(unknown.status).toBe(400)
      expect(unknown.body.error).toContain('InvalidPart')
      const tooSmall = await complete([{ part_number: 1, etag: small.etag! }, { part_number: 2, etag: last.etag! }])
      expect(tooSmall.status).toBe(400)
      expect(tooSmall.body.error).toContain('EntityTooSmall')
      expect((await api(`/api/episodes/${id}/artifacts`)).body.artifacts.find((a: { kind: string }) => a.kind === 'actions').present).toBe(false)

      // Still open: abort removes it; afterwards it is unknown.
      expect((await api(`${ep(id)}/multipart/${uploadId}`, { method: 'DELETE' })).status).toBe(204)
      expect((await api(`${ep(id)}/multipart/${uploadId}`)).status).toBe(404)
      expect((await complete([{ part_number: 2, etag: last.etag! }])).status).toBe(404)
      expect((await api(`${ep(id)}/multipart/${uploadId}`, { method: 'DELETE' })).status).toBe(404)
    }, TIMEOUT)

    it('answers 404 NoSuchUpload to an abort that a completion beat, not 204', async () => {
      const { episode_id: id } = await open({ request_uploads: [] })
      const created = await api(`${ep(id)}/multipart`, { body: { kind: 'actions', size: 100, part_size: partSize } })
      const uploadId = created.body.upload_id as string
      const part = await put(created.body.parts[0].url, bytes(100, 4))
      // The completion ran at the store (the API's own answer not yet back, its row still there).
      await svc.app.deps.storage!.multipart!.complete(objectKey(clientId, id, 'actions'), uploadId, [{ partNumber: 1, etag: part.etag! }])
      const abort = await api(`${ep(id)}/multipart/${encodeURIComponent(uploadId)}`, { method: 'DELETE' })
      expect([abort.status, abort.body.error]).toEqual([404, expect.stringContaining('NoSuchUpload')])
      expect((await api(`/api/episodes/${id}/artifacts`)).body.artifacts.find((a: { kind: string }) => a.kind === 'actions').present).toBe(true)
    }, TIMEOUT)

    it('validates the plan and applies the episode rules (404, 409)', async () => {
      const { episode_id: id } = await open({ request_uploads: [] })
      const bad = [
        [{ kind: 'video', size: 10, part_size: MiB }, 'part_size'],
        [{ kind: 'video', size: 6 * 1024 ** 4 }, 'size'],
        [{ kind: 'video', size: 10_001 * 5 * MiB, part_size: 5 * MiB }, 'part_size'],
        [{ kind: 'lidar', size: 10 }, 'kind'],
        [{ size: 10 }, 'kind'],
      ] as const
      for (const [body, field] of bad) {
        const reply = await api(`${ep(id)}/multipart`, { body })
        expect(reply.status).toBe(400)
        expect(reply.body.error).toContain(field)
      }
      expect((await api(`${ep(id)}/multipart`, { key: other, body: { kind: 'video', size: 10 } })).status).toBe(404)
      expect((await api(`${ep(id)}/multipart/nope`)).status).toBe(404)
      const created = await api(`${ep(id)}/multipart`, { body: { kind: 'sensors', size: 10 } })
      expect(created.body).toMatchObject({ part_size: 64 * MiB, part_count: 1 })
      // Past 625 GiB the default part grows (whole MiB) so the plan stays within 10,000 parts.
      const largest = await api(`${ep(id)}/multipart`, { body: { kind: 'video', size: 5 * 1024 ** 4 } })
      expect(largest.status, largest.text).toBe(201)
      expect(largest.body).toMatchObject({ part_size: 525 * MiB, part_count: 9987 })
      expect(largest.body.parts).toHaveLength(9987)
      expect((await api(`${ep(id)}/multipart/${encodeURIComponent(largest.body.upload_id)}`, { method: 'DELETE' })).status).toBe(204)
      expect((await api(`${ep(id)}/multipart/${encodeURIComponent(created.body.upload_id)}`, { key: other })).status).toBe(404)
      await api(`${ep(id)}/finalize`, { body: {} })
      expect((await api(`${ep(id)}/multipart`, { body: { kind: 'video', size: 10 } })).status).toBe(409)
      expect((await api(`${ep(id)}/multipart/${encodeURIComponent(created.body.upload_id)}`)).status).toBe(409)
    }, TIMEOUT)
  })

  describe('Idempotency-Key', () => {
    const withKey = (k: string, body: unknown, path = '/api/ingest/episode') => api(path, { body, headers: { 'idempotency-key': k } })

    it('replays an open with the same id and fresh upload URLs; another body gets 422', async () => {
      const k = `open-${Math.random()}`
      const first = await withKey(k, { robot: 'arm', request_uploads: ['actions'] })
      expect(first.status).toBe(201)
      expect(first.headers.get('idempotency-replayed')).toBeNull()
      svc.advance(2000)
      const again = await withKey(k, { robot: 'arm', request_uploads: ['actions'] })
      expect(again.status).toBe(201)
      expect(again.headers.get('idempotency-replayed')).toBe('true')
      expect(again.body.episode_id).toBe(first.body.episode_id)
      expect(again.body.upload_urls[0].url).not.toBe(first.body.upload_urls[0].url)
      expect((await put(again.body.upload_urls[0].url, bytes(5, 7), 'application/octet-stream')).status).toBe(200)
      const list = await api('/api/episodes?robot=arm&limit=200')
      expect(list.body.items.filter((e: { episode_id: string }) => e.episode_id === first.body.episode_id)).toHaveLength(1)

      // The same JSON value written otherwise (key order, whitespace, 1.0 for 1) is the same request.
      const k2 = `order-${Math.random()}`
      const raw = (text: string) => api('/api/ingest/episode', { raw: text, headers: { 'content-type': 'application/json', 'idempotency-key': k2 } })
      const ordered = await raw('{"robot":"arm","fps":30,"metadata":{"a":1,"b":[1,2]},"request_uploads":[]}')
      expect(ordered.status).toBe(201)
      const reordered = await raw('{ "request_uploads": [], "metadata": { "b": [1, 2], "a": 1.0 }, "fps": 30.0, "robot": "arm" }')
      expect([reordered.status, reordered.headers.get('idempotency-replayed'), reordered.body.episode_id]).toEqual([201, 'true', ordered.body.episode_id])
      expect((await raw('{"robot":"arm","fps":30,"metadata":{"a":1,"b":[2,1]},"request_uploads":[]}')).status).toBe(422)

      const changed = await withKey(k, { robot: 'other-arm', request_uploads: ['actions'] })
      expect(changed.status).toBe(422)
      // Keys are per client: another client's same key is its own.
      expect((await api('/api/ingest/episode', { key: other, body: {}, headers: { 'idempotency-key': k } })).status).toBe(201)
    }, TIMEOUT)

    it('answers 409 while the first request is still running, and takes over a key whose request died', async () => {
      const k = `running-${Math.random()}`
      const body = { name: 'in flight' }
      const text = JSON.stringify(body)
      // Another instance took the key and is mid-request: its row says so.
      const { createHash } = await import('node:crypto')
      const fingerprint = createHash('sha256').update(`POST\n/api/ingest/episode\n${text}`).digest('hex')
      const clientId =
        (await svc.app.deps.db.selectFrom('api_keys').select('client_id').where('key_id', '=', key.split('_')[1]!).executeTakeFirstOrThrow()).client_id
      const now = svc.app.deps.clock.now()
      await svc.app.deps.db.insertInto('idempotency_keys').values({
        client_id: clientId,
        key: k,
        fingerprint,
        state: 'running',
        status: null,
        response: null,
        locked_at: now,
        created_at: now,
      }).execute()
      const busy = await withKey(k, body)
      expect(busy.status).toBe(409)
      svc.advance(61_000)
      const taken = await withKey(k, body)
      expect(taken.status).toBe(201)
      expect((await withKey(k, body)).body.episode_id).toBe(taken.body.episode_id)
    }, TIMEOUT)

    it('a request that died after creating its episode or run: the retry that takes over answers with that one, no second', async () => {
      const clientId =
        (await svc.app.deps.db.selectFrom('api_keys').select('client_id').where('key_id', '=', key.split('_')[1]!).executeTakeFirstOrThrow()).client_id
      // The instance made the row, then died before marking the key done.
      const dieAfterCreating = (k: string) =>
        svc.app.deps.db.updateTable('idempotency_keys').set({ state: 'running', status: null, response: null }).where('client_id', '=', clientId).where(
          'key',
          '=',
          k,
        )
          .execute()
      const name = `died-${Math.random()}`
      const k = `died-${Math.random()}`
      const first = await withKey(k, { name, request_uploads: ['actions'] })
      expect(first.status).toBe(201)
      await dieAfterCreating(k)
      svc.advance(61_000)
      const retried = await withKey(k, { name, request_uploads: ['actions'] })
      expect(retried.status).toBe(201)
      expect(retried.body).toMatchObject({
        episode_id: first.body.episode_id,
        status: 'recording',
        upload_urls: [expect.objectContaining({ kind: 'actions' })],
      })
      const named = await svc.app.deps.db.selectFrom('episodes').select('id').where('client_id', '=', clientId).where('name', '=', name).execute()
      expect(named).toEqual([{ id: first.body.episode_id }])
      // Its upload URL works on the episode the first request made.
      expect((await put(retried.body.upload_urls[0].url, bytes(10, 3), 'application/octet-stream')).status).toBe(200)

      const runKey = `died-run-${Math.random()}`
      const body = { candidate_policy_version: `v-${name}`, baseline_episode_ids: [first.body.episode_id] }
      const run = await withKey(runKey, body, '/api/ingest/eval-run')
      expect(run.status).toBe(201)
      await dieAfterCreating(runKey)
      svc.advance(61_000)
      const again = await withKey(runKey, body, '/api/ingest/eval-run')
      expect([again.status, again.body]).toEqual([201, run.body])
      const runs = await svc.app.deps.db.selectFrom('eval_runs').select('id').where('candidate_policy_version', '=', `v-${name}`).execute()
      expect(runs).toEqual([{ id: run.body.eval_run_id }])
    }, TIMEOUT)

    it('covers eval-run create; a failed first request leaves the key free; bad keys are 400', async () => {
      const { episode_id } = await open({ request_uploads: [] })
      const k = `run-${Math.random()}`
      const missing = await withKey(
        k,
        { candidate_policy_version: 'v2', baseline_episode_ids: ['00000000-0000-4000-8000-000000000000'] },
        '/api/ingest/eval-run',
      )
      expect(missing.status).toBe(404)
      const body = { candidate_policy_version: 'v2', baseline_episode_ids: [episode_id] }
      const first = await withKey(k, body, '/api/ingest/eval-run')
      expect(first.status).toBe(201)
      const again = await withKey(k, body, '/api/ingest/eval-run')
      expect(again.status).toBe(201)
      expect(again.headers.get('idempotency-replayed')).toBe('true')
      expect(again.body).toEqual(first.body)
      expect((await withKey(k, { ...body, name: 'other' }, '/api/ingest/eval-run')).status).toBe(422)
      expect((await withKey('', {})).status).toBe(400)
      expect((await withKey('x'.repeat(256), {})).status).toBe(400)
    }, TIMEOUT)
  })

  describe('did the bytes arrive', () => {
    it('lists each artifact from a HEAD; verify_artifacts refuses to finalize with one missing, then fills bytes_total', async () => {
      const { episode_id: id, upload_urls } = await open({ request_uploads: ['video', 'actions'] })
      const url = (kind: string) => upload_urls.find((u) => u.kind === kind)!.url
      expect((await put(url('video'), bytes(1000, 8), 'video/mp4')).status).toBe(200)

      const listed = await api(`/api/episodes/${id}/artifacts`)
      expect(listed.status).toBe(200)
      expect(listed.body.episode_id).toBe(id)
      expect(listed.body.artifacts).toEqual([
        { kind: 'video', requested: true, present: true, size: 1000, etag: expect.any(String), content_type: 'video/mp4' },
        { kind: 'actions', requested: true, present: false, size: null, etag: null, content_type: null },
        { kind: 'sensors', requested: false, present: false, size: null, etag: null, content_type: null },
      ])

      const refused = await api(`${ep(id)}/finalize`, { body: { verify_artifacts: true, metadata: { a: 1 } } })
      expect(refused.status).toBe(409)
      expect(refused.body).toEqual({ error: 'artifacts missing: actions' })
      const unchanged = await api(`/api/episodes/${id}`)
      expect(unchanged.body).toMatchObject({ status: 'recording', metadata: {}, bytes_total: null })

      expect((await put(url('actions'), bytes(24, 9), 'application/octet-stream')).status).toBe(200)
      const done = await api(`${ep(id)}/finalize`, { body: { verify_artifacts: true } })
      expect(done.status).toBe(200)
      expect((await api(`/api/episodes/${id}`)).body).toMatchObject({ status: 'ready', bytes_total: 1024 })

      const given = await open({ request_uploads: [] })
      expect((await api(`${ep(given.episode_id)}/finalize`, { body: { verify_artifacts: true, bytes_total: 7 } })).status).toBe(200)
      expect((await api(`/api/episodes/${given.episode_id}`)).body.bytes_total).toBe(7)
      expect((await api(`${ep(id)}/finalize`, { body: { verify_artifacts: 'yes' } })).status).toBe(400)
    }, TIMEOUT)

    it('answers 404 alike for foreign, unknown and malformed ids', async () => {
      const { episode_id: id } = await open({ request_uploads: [] })
      const replies = await Promise.all([
        api(`/api/episodes/${id}/artifacts`, { key: other }),
        api('/api/episodes/00000000-0000-4000-8000-000000000000/artifacts'),
        api('/api/episodes/nope/artifacts'),
      ])
      for (const reply of replies) expect([reply.status, reply.body]).toEqual([404, { error: 'episode not found' }])
    }, TIMEOUT)
  })

  describe.runIf(store === 'built-in')("the built-in store's S3 limits", () => {
    it('refuses a single PUT declared over 5 GiB with 400 EntityTooLarge before reading the body', async () => {
      const { upload_urls } = await open({ request_uploads: ['video'] })
      const reply = await declaredPut(upload_urls[0]!.url, { 'content-type': 'video/mp4', 'content-length': String(5 * 1024 ** 3 + 1) })
      expect(reply.status).toBe(400)
      expect(reply.text).toContain('<Code>EntityTooLarge</Code>')
    }, TIMEOUT)

    it('refuses a PUT without a length (chunked) with 411 MissingContentLength', async () => {
      const { upload_urls } = await open({ request_uploads: ['video'] })
      const reply = await declaredPut(upload_urls[0]!.url, { 'content-type': 'video/mp4', 'transfer-encoding': 'chunked' })
      expect(reply.status).toBe(411)
      expect(reply.text).toContain('<Code>MissingContentLength</Code>')
    }, TIMEOUT)
  })

  describe.runIf(store === 'built-in')('the built-in store after a crash', () => {
    it('answers a complete retried after the server died between publishing the object and cleaning up', async () => {
      const { episode_id: id } = await open({ request_uploads: [] })
      const partSize = 5 * MiB
      const whole = bytes(partSize + 1234, 8)
      const created = await api(`${ep(id)}/multipart`, { body: { kind: 'sensors', size: whole.byteLength, part_size: partSize } })
      const uploadId = created.body.upload_id as string
      const sent = [await put(created.body.parts[0].url, whole.subarray(0, partSize)), await put(created.body.parts[1].url, whole.subarray(partSize))]
      const parts = sent.map((reply, i) => ({ part_number: i + 1, etag: reply.etag! }))

      // The killed request got as far as the store's rename of the joined file
      // into place: the object is there, the upload's folder (without its
      // `data`, with `.completing` naming the dead process) and its row too.
      const uploads = join(svc.dataDir, 'objects', '.uploads')
      const saved = join(svc.dataDir, 'saved-upload')
      await cp(join(uploads, uploadId), saved, { recursive: true })
      const multipart = svc.app.deps.storage!.multipart!
      const { etag } = await multipart.complete(objectKey(clientId, id, 'sensors'), uploadId, parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })))
      await rename(saved, join(uploads, uploadId))
      await rm(join(uploads, uploadId, 'data'))
      await writeFile(join(uploads, uploadId, '.completing'), String(spawnSync(process.execPath, ['-e', '0']).pid))

      const errors = svc.errors.length
      const retried = await api(`${ep(id)}/multipart/${uploadId}/complete`, { body: { parts } })
      expect(retried.status).toBe(200)
      expect(retried.body).toEqual({ episode_id: id, kind: 'sensors', size: whole.byteLength, etag })
      expect(svc.errors).toHaveLength(errors)
      expect(await readdir(uploads)).not.toContain(uploadId)
      expect((await api(`${ep(id)}/multipart/${uploadId}`)).status).toBe(404)
      const artifact = (await api(`/api/episodes/${id}/artifacts`)).body.artifacts.find((a: { kind: string }) => a.kind === 'sensors')
      expect(artifact).toMatchObject({ present: true, size: whole.byteLength, etag })
    }, TIMEOUT)
  })
})
