import { describe, expect, it } from 'vitest'
import { createLocalStorage } from '../../src/storage/local.ts'
import { createR2Files, type R2BucketLike } from './r2-files.ts'

/** An in-memory stand-in for an R2 binding that records what it was handed. */
function fakeBucket() {
  const objects = new Map<string, Uint8Array>()
  const handed: ReadableStream<Uint8Array>[] = []
  const bucket: R2BucketLike = {
    async put(key, value) {
      if (typeof value === 'string') throw new Error('unused')
      handed.push(value)
      const bytes = new Uint8Array(await new Response(value).arrayBuffer())
      objects.set(key, bytes)
      return { size: bytes.byteLength, etag: `etag-of-${key}` }
    },
    // deno-lint-ignore require-await -- a fake of R2's async get
    async get(key) {
      const bytes = objects.get(key)
      if (!bytes) return null
      const body = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(bytes), c.close()) })
      return { body, size: bytes.byteLength, etag: `etag-of-${key}` }
    },
  }
  return { bucket, objects, handed }
}

describe('createR2Files', () => {
  it('hands the upload stream itself to R2 (no buffering here) and returns its size and etag', async () => {
    const { bucket, objects, handed } = fakeBucket()
    const body = new Response('hello').body!
    expect(await createR2Files(bucket).put('c/e/actions.npz', body)).toEqual({ size: 5, etag: 'etag-of-c/e/actions.npz' })
    expect(handed[0]).toBe(body)
    expect(new TextDecoder().decode(objects.get('c/e/actions.npz'))).toBe('hello')
  })

  it('reads back as a stream, and null for a missing key', async () => {
    const { bucket } = fakeBucket()
    const files = createR2Files(bucket)
    await files.put('k', new Response('bytes').body!)
    const object = await files.get('k')
    expect(object && { size: object.size, text: await new Response(object.body).text() }).toEqual({ size: 5, text: 'bytes' })
    expect(await files.get('missing')).toBeNull()
  })

  it('serves the built-in store: a signed PUT lands in the bucket, a signed GET reads it back', async () => {
    const { bucket, objects } = fakeBucket()
    const storage = createLocalStorage({ files: createR2Files(bucket), secret: 'secret' })
    const now = new Date()
    const origin = 'https://worker.example.com'
    const put = await storage.presignPut({ key: 'c/e/video.mp4', now, expiresInSeconds: 60, origin, contentType: 'video/mp4' })
    const stored = await storage.handle(
      new Request(put.url, { method: 'PUT', headers: { 'content-type': 'video/mp4', 'content-length': '3' }, body: 'mp4' }),
      now,
    )
    expect(stored.status).toBe(200)
    expect(new TextDecoder().decode(objects.get('c/e/video.mp4'))).toBe('mp4')
    const get = await storage.presignGet({ key: 'c/e/video.mp4', now, expiresInSeconds: 60, origin })
    const read = await storage.handle(new Request(get.url), now)
    expect(await read.text()).toBe('mp4')
  })
})
