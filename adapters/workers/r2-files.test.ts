import { describe, expect, it } from 'vitest'
import { createLocalStorage } from '../../src/storage/local.ts'
import { createR2Files, type R2BucketLike } from './r2-files.ts'

/** An in-memory stand-in for an R2 binding that records what it was handed. */
function fakeBucket() {
  const objects = new Map<string, Uint8Array>()
  const handed: ReadableStream<Uint8Array>[] = []
  /** The range each get asked R2 for (null: the whole object). */
  const ranges: Array<{ offset: number; length: number } | null> = []
  const bucket: R2BucketLike = {
    async put(key, value) {
      if (typeof value === 'string') throw new Error('unused')
      handed.push(value)
      const bytes = new Uint8Array(await new Response(value).arrayBuffer())
      objects.set(key, bytes)
      return { size: bytes.byteLength, etag: `etag-of-${key}` }
    },
    // deno-lint-ignore require-await -- a fake of R2's async get
    async get(key, options) {
      const bytes = objects.get(key)
      if (!bytes) return null
      ranges.push(options?.range ?? null)
      const { offset = 0, length = bytes.byteLength } = options?.range ?? {}
      const piece = bytes.subarray(offset, offset + length)
      const body = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(piece), c.close()) })
      return { body, size: bytes.byteLength, etag: `etag-of-${key}` }
    },
  }
  return { bucket, objects, handed, ranges }
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

  it('asks R2 for the byte range of a ranged GET instead of streaming the object up to it', async () => {
    const { bucket, objects, ranges } = fakeBucket()
    objects.set('c/e/video.mp4', new TextEncoder().encode('0123456789'))
    const storage = createLocalStorage({ files: createR2Files(bucket), secret: 'secret' })
    const now = new Date()
    const get = await storage.presignGet({ key: 'c/e/video.mp4', now, expiresInSeconds: 60, origin: 'https://worker.example.com' })
    const read = await storage.handle(new Request(get.url, { headers: { range: 'bytes=-3' } }), now)
    expect(read.status).toBe(206)
    expect(read.headers.get('content-range')).toBe('bytes 7-9/10')
    expect(await read.text()).toBe('789')
    expect(ranges.at(-1)).toEqual({ offset: 7, length: 3 })
  })
})
