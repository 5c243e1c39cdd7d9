import { describe, expect, it } from 'vitest'
import { createLocalStorage, LOCAL_ACCESS_KEY_ID } from './local.ts'
import { createMemoryFiles } from './memory-files.ts'
import { createPresigner } from './sigv4.ts'
import { noSuchUpload } from './types.ts'

const origin = 'http://127.0.0.1:8787'
const now = new Date('2030-01-01T00:00:00Z')
const key = 'c1/0b5e0000-0000-4000-8000-000000000001/video.mp4'
const minutes = (n: number) => new Date(now.getTime() + n * 60_000)

function setup() {
  const storage = createLocalStorage({ files: createMemoryFiles(), secret: 'test-secret' })
  const putUrl = (k = key) => storage.presignPut({ key: k, contentType: 'video/mp4', origin, now, expiresInSeconds: 1800 })
  const getUrl = (k = key) => storage.presignGet({ key: k, origin, now, expiresInSeconds: 900 })
  // A request built in process has no Content-Length (fetch adds it when
  // sending); the store requires one, as S3 does, so the tests declare it.
  const put = (url: string, body: BodyInit = 'frames', contentType = 'video/mp4', at = minutes(1), length = declaredLength(body)) =>
    // duplex: required by fetch for stream bodies (absent from TS's DOM RequestInit).
    storage.handle(
      new Request(url, { method: 'PUT', body, headers: { 'content-type': contentType, 'content-length': String(length) }, duplex: 'half' } as RequestInit),
      at,
    )
  const get = (url: string, at = minutes(1)) => storage.handle(new Request(url), at)
  return { storage, putUrl, getUrl, put, get }
}

/** The length a sender declares: a string's UTF-8 bytes; streams here declare 1 MiB. */
function declaredLength(body: BodyInit): number {
  if (typeof body === 'string') return new TextEncoder().encode(body).byteLength
  return 1024 * 1024
}

async function s3Error(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/xml')
  const xml = await response.text()
  expect(xml.startsWith('<?xml')).toBe(true)
  return { status: response.status, code: /<Code>(.*?)<\/Code>/.exec(xml)?.[1], message: /<Message>(.*?)<\/Message>/.exec(xml)?.[1] }
}

function withParam(url: string, name: string, value: string | null): string {
  const u = new URL(url)
  if (value === null) u.searchParams.delete(name)
  else u.searchParams.set(name, value)
  return u.toString()
}

describe('built-in local object store', () => {
  it('mints URLs under /storage/<key> for the request origin, content-type signed', async () => {
    const { putUrl } = setup()
    const { url, expiresAt } = await putUrl()
    expect(url.startsWith(`${origin}/storage/${key}?`)).toBe(true)
    const q = new URL(url).searchParams
    expect(q.get('X-Amz-Credential')).toBe(`${LOCAL_ACCESS_KEY_ID}/20300101/auto/s3/aws4_request`)
    expect(q.get('X-Amz-SignedHeaders')).toBe('content-type;host')
    expect(q.get('X-Amz-Expires')).toBe('1800')
    expect(expiresAt.toISOString()).toBe('2030-01-01T00:30:00.000Z')
  })

  it('round-trips a streamed PUT and a GET through minted URLs', async () => {
    const { putUrl, getUrl, put, get } = setup()
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('hello '))
        c.enqueue(new TextEncoder().encode('robot'))
        c.close()
      },
    })
    const stored = await put((await putUrl()).url, body)
    expect(stored.status).toBe(200)
    const etag = stored.headers.get('etag')
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/)

    const read = await get((await getUrl()).url)
    expect(read.status).toBe(200)
    expect(read.headers.get('etag')).toBe(etag)
    expect(read.headers.get('content-length')).toBe('11')
    expect(read.headers.get('content-type')).toBe('video/mp4')
    expect(await read.text()).toBe('hello robot')
  })

  it('answers 403 SignatureDoesNotMatch to a Content-Type other than the signed one', async () => {
    const { putUrl, put } = setup()
    expect(await s3Error(await put((await putUrl()).url, 'x', 'application/octet-stream'))).toMatchObject({
      status: 403,
      code: 'SignatureDoesNotMatch',
    })
  })

  it('answers 403 SignatureDoesNotMatch to a tampered signature, key or method', async () => {
    const { putUrl, getUrl, put, get } = setup()
    const { url } = await putUrl()
    const signature = new URL(url).searchParams.get('X-Amz-Signature')!
    const flipped = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0')
    expect((await s3Error(await put(withParam(url, 'X-Amz-Signature', flipped)))).code).toBe('SignatureDoesNotMatch')
    expect((await s3Error(await put(url.replace('video.mp4', 'actions.npz')))).code).toBe('SignatureDoesNotMatch')
    expect((await s3Error(await put(withParam(url, 'X-Amz-Expires', '3600')))).code).toBe('SignatureDoesNotMatch')
    expect(await s3Error(await put((await getUrl()).url))).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' })
    expect((await s3Error(await get(url))).code).toBe('SignatureDoesNotMatch')
  })

  it('rejects URLs signed with another secret', async () => {
    const { put } = setup()
    const other = createLocalStorage({ files: createMemoryFiles(), secret: 'other-secret' })
    const { url } = await other.presignPut({ key, contentType: 'video/mp4', origin, now, expiresInSeconds: 1800 })
    expect((await s3Error(await put(url))).code).toBe('SignatureDoesNotMatch')
  })

  it('answers 403 AccessDenied "Request has expired" after expiry', async () => {
    const { putUrl, put } = setup()
    const { url } = await putUrl()
    expect((await put(url, 'x', 'video/mp4', minutes(29))).status).toBe(200)
    expect(await s3Error(await put(url, 'x', 'video/mp4', minutes(31)))).toEqual({
      status: 403,
      code: 'AccessDenied',
      message: 'Request has expired',
    })
  })

  it('answers 403 AccessDenied when auth parameters are missing', async () => {
    const { putUrl, put, get } = setup()
    const { url } = await putUrl()
    expect((await s3Error(await get(`${origin}/storage/${key}`))).code).toBe('AccessDenied')
    expect(await s3Error(await put(withParam(url, 'X-Amz-Signature', null)))).toMatchObject({ status: 403, code: 'AccessDenied' })
    expect((await s3Error(await put(withParam(url, 'X-Amz-Date', null)))).code).toBe('AccessDenied')
  })

  it('answers 400 AuthorizationQueryParametersError to malformed or out-of-scope parameters', async () => {
    const { putUrl, put } = setup()
    const { url } = await putUrl()
    const credential = new URL(url).searchParams.get('X-Amz-Credential')!
    for (
      const [name, value] of [
        ['X-Amz-Expires', '604801'],
        ['X-Amz-Expires', '0'],
        ['X-Amz-Algorithm', 'AWS4-HMAC-SHA1'],
        ['X-Amz-Date', '20300101T000000'],
        ['X-Amz-Credential', credential.replace('/auto/', '/us-east-1/')],
        ['X-Amz-SignedHeaders', 'content-type'],
      ]
    ) {
      expect(await s3Error(await put(withParam(url, name!, value!)))).toMatchObject({ status: 400, code: 'AuthorizationQueryParametersError' })
    }
    const foreignKey = withParam(url, 'X-Amz-Credential', credential.replace(LOCAL_ACCESS_KEY_ID, 'AKIAOTHER'))
    expect(await s3Error(await put(foreignKey))).toMatchObject({ status: 403, code: 'InvalidAccessKeyId' })
  })

  it('answers 404 NoSuchKey to a GET of a missing object', async () => {
    const { getUrl, get } = setup()
    expect(await s3Error(await get((await getUrl('c1/e9/actions.npz')).url))).toMatchObject({ status: 404, code: 'NoSuchKey' })
  })

  it('answers 405 to other methods', async () => {
    const { storage, putUrl } = setup()
    const response = await storage.handle(new Request((await putUrl()).url, { method: 'DELETE' }), minutes(1))
    expect(response.headers.get('allow')).toBe('GET, HEAD, PUT')
    expect(await s3Error(response)).toMatchObject({ status: 405, code: 'MethodNotAllowed' })
  })

  it('answers HEAD as S3 does: a GET URL is refused (method signed), a URL signed for HEAD gets the headers without a body', async () => {
    const { storage, putUrl, getUrl, put } = setup()
    expect((await put((await putUrl()).url, 'frames')).status).toBe(200)
    const getOnly = await storage.handle(new Request((await getUrl()).url, { method: 'HEAD' }), minutes(1))
    expect(getOnly.status).toBe(403)
    // The store mints no HEAD URLs; sign one with the store's credentials, as an S3 client would.
    const presigner = createPresigner({ accessKeyId: LOCAL_ACCESS_KEY_ID, secretAccessKey: 'test-secret', region: 'auto' })
    const headUrl = (k = key) => presigner.presign({ method: 'HEAD', url: `${origin}/storage/${k}`, now, expiresInSeconds: 900 })
    const head = await storage.handle(new Request(await headUrl(), { method: 'HEAD' }), minutes(1))
    expect(head.status).toBe(200)
    expect(Object.fromEntries(head.headers)).toMatchObject({ 'content-length': '6', 'content-type': 'video/mp4', 'accept-ranges': 'bytes' })
    expect(head.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/)
    expect(head.body).toBeNull()
    const ranged = await storage.handle(new Request(await headUrl(), { method: 'HEAD', headers: { range: 'bytes=-2' } }), minutes(1))
    expect([ranged.status, ranged.headers.get('content-range'), ranged.headers.get('content-length'), ranged.body]).toEqual([206, 'bytes 4-5/6', '2', null])
    const missing = await storage.handle(new Request(await headUrl('c1/e9/actions.npz'), { method: 'HEAD' }), minutes(1))
    expect([missing.status, missing.body]).toEqual([404, null])
  })

  it('answers conditional GET and HEAD as S3 does: 304 with the ETag, 412 PreconditionFailed; a Range still applies', async () => {
    const { storage, putUrl, getUrl, put } = setup()
    expect((await put((await putUrl()).url, 'frames')).status).toBe(200)
    const { url } = await getUrl()
    const etag = (await storage.handle(new Request(url), minutes(1))).headers.get('etag')!
    const ask = (headers: Record<string, string>) => storage.handle(new Request(url, { headers }), minutes(1))
    const unchanged = await ask({ 'if-none-match': etag })
    expect([unchanged.status, unchanged.headers.get('etag'), await unchanged.text()]).toEqual([304, etag, ''])
    expect(await s3Error(await ask({ 'if-match': '"0123"' }))).toMatchObject({ status: 412, code: 'PreconditionFailed' })
    const ranged = await ask({ 'if-match': etag, range: 'bytes=0-1' })
    expect([ranged.status, await ranged.text()]).toEqual([206, 'fr'])
    const changed = await ask({ 'if-none-match': '"0123"' })
    expect([changed.status, await changed.text()]).toEqual([200, 'frames'])
    // The memory store keeps no change time: no Last-Modified, and date conditions are ignored.
    expect(changed.headers.get('last-modified')).toBeNull()
    expect((await ask({ 'if-modified-since': 'Fri, 01 Jan 2100 00:00:00 GMT' })).status).toBe(200)
  })

  it('serves a presigned request that also carries an Authorization header (a same-origin redirect keeps it)', async () => {
    const { storage, putUrl, getUrl } = setup()
    const { url } = await putUrl()
    const headers = { 'content-type': 'video/mp4', 'content-length': '6', authorization: 'Bearer epk_x' }
    expect((await storage.handle(new Request(url, { method: 'PUT', body: 'frames', headers }), minutes(1))).status).toBe(200)
    const read = await storage.handle(new Request((await getUrl()).url, { headers: { authorization: 'Bearer epk_x' } }), minutes(1))
    expect([read.status, await read.text()]).toEqual([200, 'frames'])
  })

  it('stores nothing when the upload body fails midway', async () => {
    const { putUrl, getUrl, put, get } = setup()
    const failing = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array([1, 2, 3]))
        c.error(new Error('connection reset'))
      },
    })
    const failed = await put((await putUrl()).url, failing)
    // The body was not read to its end: the client must not reuse the connection.
    expect(failed.headers.get('connection')).toBe('close')
    expect((await s3Error(failed)).status).toBe(500)
    expect((await get((await getUrl()).url)).status).toBe(404)
  })

  it('checks a Content-MD5 as S3 does: BadDigest stores nothing, InvalidDigest for one that is not a digest', async () => {
    const { putUrl, getUrl, storage } = setup()
    const url = (await putUrl()).url
    const send = (contentMd5: string, body = 'frames') =>
      storage.handle(
        new Request(url, { method: 'PUT', body, headers: { 'content-type': 'video/mp4', 'content-length': String(body.length), 'content-md5': contentMd5 } }),
        minutes(1),
      )
    const right = '3NwawHmpHVE6WnWbD7nB3A==' // base64 MD5 of "frames"
    expect((await send(right)).status).toBe(200)
    const wrong = await send(right, 'frameZ')
    expect(await s3Error(wrong)).toMatchObject({ status: 400, code: 'BadDigest' })
    // The object is still the first one: the refused body was not stored.
    expect(await (await storage.handle(new Request((await getUrl()).url), minutes(1))).text()).toBe('frames')
    expect(await s3Error(await send('not-a-digest'))).toMatchObject({ status: 400, code: 'InvalidDigest' })
  })

  it('refuses to mint URLs for unsafe keys', async () => {
    const { putUrl } = setup()
    await expect(putUrl('c1/../../etc/passwd')).rejects.toThrow(/unsafe object key/)
  })
})

describe('refused uploads', () => {
  /** A body of `chunks` x 1 MiB that records how much of it was read and whether it was cancelled. */
  function trackedBody(chunks: number) {
    const state = { pulled: 0, cancelled: false }
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (state.pulled === chunks) return controller.close()
        state.pulled++
        controller.enqueue(new Uint8Array(1024 * 1024))
      },
      cancel() {
        state.cancelled = true
      },
    })
    return { body, state }
  }

  it('reads a small refused body to the end before answering 403, so the uploader sees the answer', async () => {
    const { put, putUrl } = setup()
    const { body, state } = trackedBody(3)
    const response = await put((await putUrl()).url, body, 'application/json')
    expect((await s3Error(response)).code).toBe('SignatureDoesNotMatch')
    expect(state).toEqual({ pulled: 3, cancelled: false })
    expect(response.headers.get('connection')).toBeNull()
  })

  it('gives up reading a large refused body and says the connection closes', async () => {
    const { put, putUrl } = setup()
    const { body, state } = trackedBody(64)
    const response = await put((await putUrl()).url, body, 'application/json')
    expect((await s3Error(response)).code).toBe('SignatureDoesNotMatch')
    expect(state.cancelled).toBe(true)
    expect(state.pulled).toBeLessThan(64)
    expect(response.headers.get('connection')).toBe('close')
  })

  it('answers 404 NoSuchUpload, not 500, to a part whose upload is aborted while its body is being read', async () => {
    const files = createMemoryFiles()
    const multipart = files.multipart!
    // The abort lands mid-body: the layer has read a chunk when it finds the upload gone.
    files.multipart = {
      ...multipart,
      async putPart(_key, _uploadId, _n, body) {
        await body.getReader().read()
        throw noSuchUpload()
      },
    }
    const storage = createLocalStorage({ files, secret: 'test-secret' })
    const { uploadId } = await storage.multipart!.create(key, 'video/mp4')
    const signed = await storage.multipart!.presignPart({ key, uploadId, partNumber: 1, origin, now, expiresInSeconds: 1800 })
    const { body } = trackedBody(3)
    const request = new Request(signed.url, { method: 'PUT', body, headers: { 'content-length': String(3 * 1024 * 1024) }, duplex: 'half' } as RequestInit)
    expect(await s3Error(await storage.handle(request, minutes(1)))).toMatchObject({ status: 404, code: 'NoSuchUpload' })
  })

  it('stops reading a refused body past 16 MiB', async () => {
    const { put, putUrl } = setup()
    const { body, state } = trackedBody(64)
    const response = await put((await putUrl()).url, body, 'application/json')
    expect(response.status).toBe(403)
    expect(state.cancelled).toBe(true)
    expect(state.pulled).toBeLessThan(20)
  })
})

describe('per-client quota', () => {
  it('refuses an upload that would pass the quota with 403 QuotaExceeded, counting only that client', async () => {
    const files = createMemoryFiles()
    const storage = createLocalStorage({ files, secret: 's', quotaBytes: 10 })
    const put = async (k: string, body: string) => {
      const { url } = await storage.presignPut({ key: k, contentType: 'application/octet-stream', origin, now, expiresInSeconds: 60 })
      return storage.handle(
        new Request(url, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.length) } }),
        now,
      )
    }
    expect((await put('c1/e/actions.npz', '12345678')).status).toBe(200)
    const refused = await put('c1/e/sensors.npz', '123')
    expect(await s3Error(refused)).toMatchObject({ status: 403, code: 'QuotaExceeded' })
    expect((await put('c2/e/sensors.npz', '123')).status).toBe(200)
    expect((await put('c1/e/sensors.npz', '12')).status).toBe(200)
    // Replacing an object counts its new size only (8 + 2 in use; 7 in place of the 8).
    expect((await put('c1/e/actions.npz', '1234567')).status).toBe(200)
  })
  it('counts uploads still arriving: several at once cannot pass the quota together', async () => {
    const files = createMemoryFiles()
    const storage = createLocalStorage({ files, secret: 's', quotaBytes: 10 })
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const slow = () =>
      new ReadableStream<Uint8Array>({
        async start(controller) {
          await held
          controller.enqueue(new TextEncoder().encode('123456'))
          controller.close()
        },
      })
    const put = async (k: string, body: ReadableStream<Uint8Array> | string) => {
      const { url } = await storage.presignPut({ key: k, contentType: 'application/octet-stream', origin, now, expiresInSeconds: 60 })
      const init = { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', 'content-length': '6' }, duplex: 'half' }
      return storage.handle(new Request(url, init as RequestInit), now)
    }
    const first = put('c1/e1/actions.npz', slow())
    await new Promise((r) => setTimeout(r, 10)) // the first is under way, its bytes not stored yet
    const second = await put('c1/e2/actions.npz', '654321')
    expect(await s3Error(second)).toMatchObject({ status: 403, code: 'QuotaExceeded' })
    release()
    expect((await first).status).toBe(200)
  })

  it('refuses to complete a multipart upload whose object would pass the quota (QuotaExceeded); the upload stays', async () => {
    const files = createMemoryFiles()
    const storage = createLocalStorage({ files, secret: 's', quotaBytes: 10 })
    const multipart = storage.multipart!
    // Two uploads of 8 bytes each: a part alone is not an object yet, so both parts are taken.
    const uploads = await Promise.all(['c1/e1/video.mp4', 'c1/e2/video.mp4'].map(async (key) => {
      const { uploadId } = await multipart.create(key, 'video/mp4')
      const { url } = await multipart.presignPart({ key, uploadId, partNumber: 1, origin, now, expiresInSeconds: 60 })
      const part = await storage.handle(new Request(url, { method: 'PUT', body: '01234567', headers: { 'content-length': '8' } }), now)
      expect(part.status).toBe(200)
      return { key, uploadId, etag: part.headers.get('etag')! }
    }))
    const [a, b] = uploads as [(typeof uploads)[0], (typeof uploads)[0]]
    await multipart.complete(a.key, a.uploadId, [{ partNumber: 1, etag: a.etag }])
    // Before, the second completed too: 16 bytes stored under a quota of 10.
    await expect(multipart.complete(b.key, b.uploadId, [{ partNumber: 1, etag: b.etag }])).rejects.toMatchObject({ code: 'QuotaExceeded', status: 403 })
    expect(await multipart.listParts(b.key, b.uploadId)).toHaveLength(1)
  })
})
