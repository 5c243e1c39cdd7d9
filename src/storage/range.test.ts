import { describe, expect, it } from 'vitest'
import { createLocalStorage } from './local.ts'
import { createMemoryFiles } from './memory-files.ts'
import { parseRange, sliceStream } from './range.ts'

describe('byte ranges of the built-in store', () => {
  it('parses single ranges as S3 does', () => {
    expect(parseRange(null, 10)).toBeNull()
    expect(parseRange('bytes=0-', 10)).toEqual({ start: 0, end: 9 })
    expect(parseRange('bytes=2-4', 10)).toEqual({ start: 2, end: 4 })
    expect(parseRange('bytes=8-100', 10)).toEqual({ start: 8, end: 9 })
    expect(parseRange('bytes=-3', 10)).toEqual({ start: 7, end: 9 })
    expect(parseRange('bytes=-30', 10)).toEqual({ start: 0, end: 9 })
    expect(parseRange('bytes=10-', 10)).toBe('unsatisfiable')
    expect(parseRange('bytes=5-2', 10)).toBe('unsatisfiable')
    expect(parseRange('bytes=-0', 10)).toBe('unsatisfiable')
    expect(parseRange('bytes=0-1,4-5', 10)).toBeNull() // several ranges: the whole object
    expect(parseRange('items=0-1', 10)).toBeNull()
    // an empty object has no satisfiable range, suffix ranges included (S3 and RGW: 416)
    expect(parseRange('bytes=-5', 0)).toBe('unsatisfiable')
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable')
    expect(parseRange('bytes=0-0', 0)).toBe('unsatisfiable')
    expect(parseRange(null, 0)).toBeNull()
  })

  it('slices a chunked stream', async () => {
    const chunks = [Uint8Array.from([0, 1, 2]), Uint8Array.from([3, 4, 5, 6]), Uint8Array.from([7, 8, 9])]
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const x of chunks) c.enqueue(x)
          c.close()
        },
      })
    const read = async (s: ReadableStream<Uint8Array>) => [...new Uint8Array(await new Response(s).arrayBuffer())]
    expect(await read(sliceStream(stream(), 2, 7))).toEqual([2, 3, 4, 5, 6, 7])
    expect(await read(sliceStream(stream(), 0, 0))).toEqual([0])
    expect(await read(sliceStream(stream(), 9, 9))).toEqual([9])
    expect(await read(sliceStream(stream(), 3, 6))).toEqual([3, 4, 5, 6])
  })

  it('answers 206 with Content-Range, 416 past the end, and always says Accept-Ranges', async () => {
    const storage = createLocalStorage({ files: createMemoryFiles(), secret: 'range-secret' })
    const now = new Date()
    const origin = 'http://store.test'
    const put = await storage.presignPut({ key: 'c/e/video.mp4', now, expiresInSeconds: 60, origin, contentType: 'video/mp4' })
    expect(
      (await storage.handle(new Request(put.url, { method: 'PUT', body: 'abcdefghij', headers: { 'content-type': 'video/mp4', 'content-length': '10' } }), now))
        .status,
    ).toBe(200)
    const { url } = await storage.presignGet({ key: 'c/e/video.mp4', now, expiresInSeconds: 60, origin })
    const whole = await storage.handle(new Request(url), now)
    expect(whole.headers.get('accept-ranges')).toBe('bytes')
    expect(await whole.text()).toBe('abcdefghij')
    const part = await storage.handle(new Request(url, { headers: { range: 'bytes=2-5' } }), now)
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe('bytes 2-5/10')
    expect(part.headers.get('content-length')).toBe('4')
    expect(await part.text()).toBe('cdef')
    const past = await storage.handle(new Request(url, { headers: { range: 'bytes=20-' } }), now)
    expect(past.status).toBe(416)
    expect(past.headers.get('content-range')).toBe('bytes */10')
  })
})
