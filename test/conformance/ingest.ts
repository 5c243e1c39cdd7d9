/**
 * Spec conformance of the ingest API: every row of the spec's field, state,
 * error and auth tables and the contract's storage rules, against any target
 * (test/conformance/target.ts): in-process on PGlite and PostgreSQL, over
 * HTTP on every runtime.
 */
import { createHash } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Target } from './target.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex')

/** The ingest tests against the target `svc()` returns (started by the caller). */
export function ingestConformance(svc: () => Target): void {
  let key: string
  let keyId: string
  let clientId: string
  let other: { key: string }

  beforeAll(async () => {
    ;({ key, keyId, clientId } = await svc().newTenant('acme'))
    other = await svc().newTenant('globex')
  })

  const open = (body: unknown = {}, k = key) => svc().call(`${svc().url}/api/ingest/episode`, { key: k, body })
  const finalize = (id: string, body: unknown = {}, k = key) => svc().call(`${svc().url}/api/ingest/episode/${id}/finalize`, { key: k, body })
  const get = (id: string, k = key) => svc().call(`${svc().url}/api/episodes/${id}`, { key: k })

  describe('authentication', () => {
    it('accepts Authorization: Bearer and X-Service-Key alike', async () => {
      expect((await open({})).status).toBe(201)
      expect((await svc().call(`${svc().url}/api/ingest/episode`, { key, header: 'x-service-key', body: {} })).status).toBe(201)
      expect((await svc().call(`${svc().url}/api/ingest/episode`, { headers: { authorization: `bearer ${key}` }, body: {} })).status).toBe(201)
    })

    it('answers missing, malformed, unknown, wrong and revoked keys identically', async () => {
      const victim = await svc().newTenant()
      // Used first, so the server has it cached; revocation must still apply.
      expect((await open({}, victim.key)).status).toBe(201)
      await svc().revoke(victim)
      const wrongSecret = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA')
      const unknownId = `epk_aaaaaaaaaaaa_${key.slice(-43)}`
      const attempts = [
        svc().call(`${svc().url}/api/ingest/episode`, { body: {} }),
        svc().call(`${svc().url}/api/ingest/episode`, { key: 'not-a-key', body: {} }),
        svc().call(`${svc().url}/api/ingest/episode`, { headers: { authorization: `Basic ${key}` }, body: {} }),
        svc().call(`${svc().url}/api/ingest/episode`, { key: unknownId, body: {} }),
        svc().call(`${svc().url}/api/ingest/episode`, { key: wrongSecret, body: {} }),
        svc().call(`${svc().url}/api/ingest/episode`, { key: victim.key, body: {} }),
        svc().call(`${svc().url}/api/ingest/episode`, { key: victim.key, header: 'x-service-key', body: {} }),
        svc().call(`${svc().url}/api/ingest/episode/00000000-0000-4000-8000-000000000000/finalize`, { body: {} }),
      ]
      const replies = await Promise.all(attempts)
      for (const reply of replies) {
        expect(reply.status).toBe(401)
        expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="service"')
        expect(reply.text).toBe(replies[0]!.text)
      }
      expect(replies[0]!.body).toEqual({ error: expect.any(String) })
    })

    it('checks the key before the body', async () => {
      const reply = await svc().call(`${svc().url}/api/ingest/episode`, { raw: '{not json', headers: { 'content-type': 'application/json' } })
      expect(reply.status).toBe(401)
    })
  })

  describe('open', () => {
    it('opens with defaults on {}: recording, r2, one URL per artifact', async () => {
      const before = Date.now()
      const reply = await open({})
      expect(reply.status).toBe(201)
      const body = reply.body
      expect(Object.keys(body).sort()).toEqual(['episode_id', 'status', 'storage', 'upload_urls'])
      expect(body.episode_id).toMatch(UUID)
      expect(body.status).toBe('recording')
      expect(body.storage).toBe('r2')
      expect(body.upload_urls.map((u: any) => u.kind)).toEqual(['video', 'sensors', 'actions'])
      for (const entry of body.upload_urls) {
        expect(Object.keys(entry).sort()).toEqual(['expires_at', 'kind', 'public_url', 'url'])
        expect(entry.public_url).toBeNull()
        const url = new URL(entry.url)
        // Under the service's own base URL (and its path prefix, where it is mounted under one).
        expect(entry.url.split('?')[0]).toBe(
          `${svc().url}/storage/${clientId}/${body.episode_id}/${{ video: 'video.mp4', sensors: 'sensors.npz', actions: 'actions.npz' }[entry.kind as string]}`,
        )
        expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256')
        expect(url.searchParams.get('X-Amz-Expires')).toBe('1800')
        expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-type;host')
        expect(entry.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        const expires = Date.parse(entry.expires_at)
        expect(expires - before).toBeGreaterThanOrEqual(30 * 60 * 1000 - 1000)
        expect(expires - Date.now()).toBeLessThanOrEqual(30 * 60 * 1000)
      }
      const record = (await get(body.episode_id)).body
      expect(record).toMatchObject({
        episode_id: body.episode_id,
        client_id: clientId,
        name: null,
        display_name: `episode_${body.episode_id.slice(0, 8)}`,
        source: 'real',
        robot: null,
        policy_version: null,
        env_version: null,
        git_sha: null,
        seed: null,
        fps: null,
        metadata: {},
        status: 'recording',
      })
    })

    it('inserts a new row with a new id on every call', async () => {
      const ids = await Promise.all([open({ name: 'same' }), open({ name: 'same' }), open({ name: 'same' })])
      expect(new Set(ids.map((r) => r.body.episode_id)).size).toBe(3)
    })

    it('stores every field', async () => {
      const fields = {
        name: 'n'.repeat(200),
        source: 'sim',
        robot: 'r'.repeat(120),
        policy_version: 'p'.repeat(120),
        env_version: 'e'.repeat(120),
        git_sha: 'g'.repeat(64),
        // A double that JSON.stringify writes exactly (the full int64 range is in test/reliability).
        seed: -(2 ** 62),
        fps: 29.97,
        metadata: { task: 'pick', nested: { a: [1, 2, { b: null }] } },
      }
      const reply = await open({ ...fields, request_uploads: ['actions'] })
      expect(reply.status).toBe(201)
      expect(reply.body.upload_urls.map((u: any) => u.kind)).toEqual(['actions'])
      expect((await get(reply.body.episode_id)).body).toMatchObject({ ...fields, artifacts: ['actions'] })
    })

    it('gives a metadata-only run for request_uploads []', async () => {
      const reply = await open({ request_uploads: [] })
      expect(reply.status).toBe(201)
      expect(reply.body.upload_urls).toEqual([])
      expect(reply.body.storage).toBe('r2')
    })

    it.each([
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ robot: 'x'.repeat(121) }, 'robot'],
      [{ policy_version: 'x'.repeat(121) }, 'policy_version'],
      [{ env_version: 'x'.repeat(121) }, 'env_version'],
      [{ git_sha: 'x'.repeat(65) }, 'git_sha'],
      [{ name: 5 }, 'name'],
      [{ source: 'dream' }, 'source'],
      [{ seed: 1.5 }, 'seed'],
      [{ seed: 2 ** 63 }, 'seed'],
      [{ seed: '7' }, 'seed'],
      [{ fps: 0 }, 'fps'],
      [{ fps: -30 }, 'fps'],
      [{ fps: '30' }, 'fps'],
      [{ metadata: [] }, 'metadata'],
      [{ metadata: null }, 'metadata'],
      [{ metadata: 'x' }, 'metadata'],
      [{ request_uploads: ['video', 'lidar'] }, 'request_uploads'],
      [{ request_uploads: ['video', 'video'] }, 'request_uploads'],
      [{ request_uploads: 'video' }, 'request_uploads'],
      [{ episode_id: '00000000-0000-4000-8000-000000000000' }, 'episode_id'],
      [{ status: 'ready' }, 'status'],
      [{ name: 'a\u0000b' }, 'name'],
      [{ metadata: { deep: { x: ['ok', 'n\u0000l'] } } }, 'metadata.deep.x[1]'],
    ])('rejects %j with 400 naming %s', async (body, field) => {
      const reply = await open(body)
      expect(reply.status).toBe(400)
      expect(reply.body).toEqual({ error: expect.stringContaining(field) })
    })

    it.each([
      ['{"name": ', 'not valid JSON'],
      ['[]', 'JSON object'],
      ['"x"', 'JSON object'],
      ['null', 'JSON object'],
      ['42', 'JSON object'],
    ])('rejects body %s with 400', async (raw, message) => {
      const reply = await svc().call(`${svc().url}/api/ingest/episode`, { key, raw, headers: { 'content-type': 'application/json' } })
      expect(reply.status).toBe(400)
      expect(reply.body.error).toContain(message)
    })

    it('rejects a chunked body (no Content-Length) once it passes 1 MiB with 413', async () => {
      const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
      const send = () => {
        let sent = 0
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent === 0) controller.enqueue(new TextEncoder().encode('{"metadata":{"blob":"'))
            if (sent > 4 * 1024 * 1024) return controller.close()
            sent += chunk.length
            controller.enqueue(chunk)
          },
        })
        return svc().fetch(`${svc().url}/api/ingest/episode`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
          duplex: 'half',
        } as RequestInit)
      }
      // The server answers as soon as 1 MiB has arrived and may close the
      // connection while the client still writes; on a busy machine the client
      // then sees the reset before the answer. One fresh attempt.
      const reply = await send().catch((error: { cause?: { code?: string } }) => {
        if (!['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(error.cause?.code ?? '')) throw error
        return send()
      })
      expect(reply.status).toBe(413)
      expect(await reply.json()).toEqual({ error: expect.stringContaining('limit') })
    })

    it('rejects a body over 1 MiB with 413 and a deeply nested one with 400', async () => {
      const big = await open({ metadata: { blob: 'x'.repeat(1024 * 1024) } })
      expect(big.status).toBe(413)
      expect(big.body.error).toMatch(/limit/)
      let deep: unknown = 1
      for (let i = 0; i < 200; i++) deep = { d: deep }
      const nested = await open({ metadata: deep })
      expect(nested.status).toBe(400)
      expect(nested.body.error).toMatch(/nested/)
    })
  })

  describe('signed uploads (built-in object store)', () => {
    it('runs the three-step flow: open, PUT, finalize, read back', async () => {
      const opened = (await open({ request_uploads: ['actions', 'video'] })).body
      const actions = opened.upload_urls.find((u: any) => u.kind === 'actions')
      const bytes = new Uint8Array(200_000).map((_, i) => i % 251)
      const put = await svc().fetch(actions.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/octet-stream' } })
      expect(put.status).toBe(200)
      expect(put.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/)

      const done = await finalize(opened.episode_id, { duration_s: 12.5, bytes_total: bytes.length, fps: 30 })
      expect(done.status).toBe(200)
      const record = (await get(opened.episode_id)).body
      expect(record).toMatchObject({ status: 'ready', duration_s: 12.5, bytes_total: 200_000, fps: 30 })

      const signed = await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifact/actions`, { key })
      const back = await svc().fetch(signed.body.url)
      expect(back.status).toBe(200)
      // With its length, as S3 answers (a download sizes its buffer from it; Bun sent these chunked).
      expect(back.headers.get('content-length')).toBe('200000')
      expect(new Uint8Array(await back.arrayBuffer())).toEqual(bytes)
      // A byte range near the end (a video seek): exactly those bytes, with their length.
      const tail = await svc().fetch(signed.body.url, { headers: { range: 'bytes=199990-' } })
      expect(tail.status).toBe(206)
      expect(tail.headers.get('content-range')).toBe('bytes 199990-199999/200000')
      expect(tail.headers.get('content-length')).toBe('10')
      expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.subarray(199_990))
    })

    it('answers a small range of a large object with its Content-Length (a video seek)', async () => {
      const opened = (await open({ request_uploads: ['video'] })).body
      const bytes = new Uint8Array(5 * 1024 * 1024 + 3).map((_, i) => (i * 7) % 253)
      const put = await svc().fetch(opened.upload_urls[0].url, { method: 'PUT', body: bytes, headers: { 'content-type': 'video/mp4' } })
      expect(put.status).toBe(200)
      const signed = await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifact/video`, { key })
      for (const [range, start, end] of [['bytes=-10', bytes.length - 10, bytes.length - 1], ['bytes=4194304-4194403', 4194304, 4194403]] as const) {
        const part = await svc().fetch(signed.body.url, { headers: { range } })
        expect(part.status).toBe(206)
        expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${bytes.length}`)
        expect(part.headers.get('content-length')).toBe(String(end - start + 1))
        expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(start, end + 1))
      }
    })

    it('takes a 3 MiB signed PUT with the signed Content-Type, refuses another or a tampered one (403), and reads the bytes back through the artifact route', async () => {
      const opened = (await open({ request_uploads: ['actions', 'video'] })).body
      const actions = opened.upload_urls.find((u: any) => u.kind === 'actions').url
      const put = (url: string, body: BodyInit, contentType: string) => svc().fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body })
      // 3 MiB of varied bytes: large enough to arrive in many chunks.
      const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31 + (i >> 12)) & 0xff)

      // Refused before the body is read: with a 3 MiB body the server's early
      // 403 races the client's write (Node closes the socket, fetch reports EPIPE).
      const wrongType = await put(actions, 'x', 'application/json')
      expect(wrongType.status).toBe(403)
      expect(await wrongType.text()).toContain('<Code>SignatureDoesNotMatch</Code>')
      const signature = /X-Amz-Signature=([0-9a-f]{64})/.exec(actions)![1]!
      const tampered = await put(actions.replace(signature, [...signature].reverse().join('')), 'x', 'application/octet-stream')
      expect(tampered.status).toBe(403)

      const ok = await put(actions, bytes, 'application/octet-stream')
      expect(ok.status).toBe(200)
      expect(ok.headers.get('etag')).toBe(`"${md5(bytes)}"`)
      const video = opened.upload_urls.find((u: any) => u.kind === 'video').url
      expect((await put(video, 'mp4 bytes', 'video/mp4')).status).toBe(200)

      const artifact = await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifact/actions`, { key })
      expect(artifact.status).toBe(200)
      expect(artifact.body).toMatchObject({ episode_id: opened.episode_id, kind: 'actions' })
      const read = await svc().fetch(artifact.body.url)
      expect(read.status).toBe(200)
      expect(read.headers.get('content-type')).toBe('application/octet-stream')
      expect(md5(new Uint8Array(await read.arrayBuffer()))).toBe(md5(bytes))

      const redirect = await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifact/video?redirect=1`, { key })
      expect(redirect.status).toBe(302)
      const followed = await svc().fetch(redirect.headers.get('location')!)
      expect(await followed.text()).toBe('mp4 bytes')
      expect(followed.headers.get('content-type')).toBe('video/mp4')

      expect((await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifact/sensors`, { key })).status).toBe(404)
      expect((await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifact/actions`, { key: other.key })).status).toBe(404)
    })

    it("checks a PUT's Content-MD5: another digest is 400 BadDigest and stores nothing; the right one is stored", async () => {
      const opened = (await open({ request_uploads: ['video'] })).body
      const body = 'mp4 bytes, digested'
      const digest = (text: string) => createHash('md5').update(text).digest('base64')
      const put = (md5Header: string) =>
        svc().fetch(opened.upload_urls[0].url, { method: 'PUT', body, headers: { 'content-type': 'video/mp4', 'content-md5': md5Header } })
      const wrong = await put(digest('other bytes'))
      expect(wrong.status).toBe(400)
      expect(await wrong.text()).toContain('<Code>BadDigest</Code>')
      const listed = async () => (await svc().call(`${svc().url}/api/episodes/${opened.episode_id}/artifacts`, { key })).body.artifacts[0]
      expect(await listed()).toMatchObject({ kind: 'video', present: false })
      const right = await put(digest(body))
      expect(right.status).toBe(200)
      expect(await listed()).toMatchObject({ kind: 'video', present: true, size: body.length })
    })

    it('refuses a PUT whose Content-Type differs from the signed one with 403', async () => {
      const opened = (await open({ request_uploads: ['video'] })).body
      const reply = await svc().fetch(opened.upload_urls[0].url, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } })
      expect(reply.status).toBe(403)
      expect(await reply.text()).toContain('<Code>SignatureDoesNotMatch</Code>')
    })

    it('refuses a PUT after the URL expired with 403 (targets with a movable clock)', async (ctx) => {
      const advance = svc().advance
      if (!advance) return ctx.skip()
      const opened = (await open({ request_uploads: ['sensors'] })).body
      advance(31 * 60 * 1000)
      try {
        const reply = await svc().fetch(opened.upload_urls[0].url, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } })
        expect(reply.status).toBe(403)
        const text = await reply.text()
        expect(text).toContain('<Code>AccessDenied</Code>')
        expect(text).toContain('Request has expired')
      } finally {
        advance(-31 * 60 * 1000)
      }
    })

    it('refuses a tampered signature and a changed key with 403', async () => {
      const opened = (await open({ request_uploads: ['sensors'] })).body
      const url = new URL(opened.upload_urls[0].url)
      const sig = url.searchParams.get('X-Amz-Signature')!
      url.searchParams.set('X-Amz-Signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1))
      const tampered = await svc().fetch(url, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } })
      expect(tampered.status).toBe(403)
      const moved = new URL(opened.upload_urls[0].url)
      moved.pathname = moved.pathname.replace('sensors.npz', 'actions.npz')
      const other = await svc().fetch(moved, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } })
      expect(other.status).toBe(403)
    })
  })

  describe('finalize', () => {
    it('finalizes {} as ready; finalizing again returns the same payload', async () => {
      const id = (await open({ request_uploads: [] })).body.episode_id
      const first = await finalize(id, {})
      expect(first.status).toBe(200)
      expect(Object.keys(first.body).sort()).toEqual(['episode_id', 'status', 'updated_at'])
      expect(first.body).toMatchObject({ episode_id: id, status: 'ready' })
      expect(first.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const again = await finalize(id, {})
      expect(again.status).toBe(200)
      expect(again.body).toEqual(first.body)
      const asFailed = await finalize(id, { status: 'failed' })
      expect(asFailed.body).toEqual(first.body)
      expect((await get(id)).body.status).toBe('ready')
    })

    it('keeps values a finalize does not mention and applies those it does', async () => {
      const id = (await open({ fps: 15, request_uploads: [] })).body.episode_id
      await finalize(id, { status: 'failed', duration_s: 3 })
      expect((await get(id)).body).toMatchObject({ status: 'failed', fps: 15, duration_s: 3, bytes_total: null })
      await finalize(id, { fps: 60, bytes_total: 0 })
      expect((await get(id)).body).toMatchObject({ status: 'ready', fps: 60, duration_s: 3, bytes_total: 0 })
    })

    it('moves failed -> ready and merges metadata per key across calls', async () => {
      const id = (await open({ metadata: { a: 1, keep: 'yes' }, request_uploads: [] })).body.episode_id
      const failed = await finalize(id, { status: 'failed', metadata: { b: 2, a: 10 } })
      expect(failed.body.status).toBe('failed')
      const ready = await finalize(id, { status: 'ready', metadata: { c: { nested: true } } })
      expect(ready.body.status).toBe('ready')
      expect((await get(id)).body.metadata).toEqual({ a: 10, keep: 'yes', b: 2, c: { nested: true } })
    })

    it('answers 409 for an archived episode and changes nothing', async () => {
      const id = (await open({ metadata: { x: 1 }, request_uploads: [] })).body.episode_id
      await finalize(id, { status: 'failed' })
      await svc().archive(id)
      const before = (await get(id)).body
      const reply = await finalize(id, { status: 'ready', metadata: { y: 2 }, duration_s: 9 })
      expect(reply.status).toBe(409)
      expect(reply.body).toEqual({ error: expect.stringContaining('archived') })
      expect((await finalize(id, {})).status).toBe(409)
      expect((await get(id)).body).toEqual(before)
    })

    it('answers the same 404 for another client, an unknown id and a malformed id', async () => {
      const id = (await open({ request_uploads: [] })).body.episode_id
      const foreign = await finalize(id, {}, other.key)
      const unknown = await finalize('5b0f3c36-1111-4222-8333-444455556666', {})
      const malformed = await finalize('not-a-uuid', {})
      const injected = await finalize("1' or '1'='1", {})
      for (const reply of [foreign, unknown, malformed, injected]) {
        expect(reply.status).toBe(404)
        expect(reply.text).toBe(foreign.text)
      }
      expect((await get(id, other.key)).status).toBe(404)
      expect((await get(id)).body.status).toBe('recording')
    })

    it.each([
      [{ status: 'archived' }, 'status'],
      [{ status: 'recording' }, 'status'],
      [{ duration_s: -1 }, 'duration_s'],
      [{ bytes_total: -1 }, 'bytes_total'],
      [{ bytes_total: 1.5 }, 'bytes_total'],
      [{ fps: 0 }, 'fps'],
      [{ metadata: [1] }, 'metadata'],
      [{ name: 'late' }, 'name'],
    ])('rejects %j with 400 naming %s', async (body, field) => {
      const id = (await open({ request_uploads: [] })).body.episode_id
      const reply = await finalize(id, body)
      expect(reply.status).toBe(400)
      expect(reply.body.error).toContain(field)
      expect((await get(id)).body.status).toBe('recording')
    })

    it('takes duration_s 0 and stores it as 0, not as absent', async () => {
      const id = (await open({ request_uploads: [] })).body.episode_id
      const reply = await finalize(id, { duration_s: 0 })
      expect(reply.status).toBe(200)
      expect((await get(id)).body).toMatchObject({ status: 'ready', duration_s: 0 })
    })

    it.each([
      ['{"status": ', 'not valid JSON'],
      ['[]', 'JSON object'],
      ['null', 'JSON object'],
    ])('rejects finalize body %s with 400 and changes nothing', async (raw, message) => {
      const id = (await open({ request_uploads: [] })).body.episode_id
      const reply = await svc().call(`${svc().url}/api/ingest/episode/${id}/finalize`, { key, raw, headers: { 'content-type': 'application/json' } })
      expect(reply.status).toBe(400)
      expect(reply.body).toEqual({ error: expect.stringContaining(message) })
      expect((await get(id)).body.status).toBe('recording')
    })

    it('keeps every key of 50 concurrent finalizes', async () => {
      const id = (await open({ request_uploads: [] })).body.episode_id
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) => finalize(id, { metadata: { [`k${i}`]: i } })),
      )
      expect(replies.every((r) => r.status === 200)).toBe(true)
      expect(new Set(replies.map((r) => r.body.updated_at)).size).toBe(1)
      const metadata = (await get(id)).body.metadata
      expect(Object.keys(metadata)).toHaveLength(50)
      for (let i = 0; i < 50; i++) expect(metadata[`k${i}`]).toBe(i)
    })
  })

  describe('errors', () => {
    it('answers unknown routes with a JSON 404', async () => {
      const reply = await svc().call(`${svc().url}/api/nothing-here`, { key })
      expect(reply.status).toBe(404)
      expect(reply.body).toEqual({ error: 'not found' })
    })
  })

  it('serves the portal and its plots bundle (a module of strings, no file access) and searches metadata', async () => {
    expect((await svc().call(`${svc().url}/`)).headers.get('location')).toMatch(/\/portal$/)
    const js = await svc().fetch(`${svc().url}/portal/assets/plots.js`)
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect((await js.text()).length).toBeGreaterThan(20_000)
    const tag = `t-${Math.random().toString(36).slice(2)}`
    const opened = await open({ request_uploads: [], metadata: { tag, seed: 5 } })
    const found = await svc().call(`${svc().url}/api/episodes?metadata.tag=${tag}&metadata.seed=5`, { key })
    expect(found.body.items.map((e: any) => e.episode_id)).toEqual([opened.body.episode_id])
  })

  it('keeps working for the key used throughout', async () => {
    expect(keyId).toMatch(/^[a-z2-7]{12}$/)
    expect((await open({})).status).toBe(201)
  })
}
