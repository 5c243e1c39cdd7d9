import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLocalStorage } from '../../src/storage/local.ts'
import { createDiskFiles, STALE_TEMP_MS } from './files.ts'
import { NodeSha256 } from './sha256.ts'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'episodic-files-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const encoder = new TextEncoder()
const md5 = (text: string) => createHash('md5').update(text).digest('hex')

function streamOf(chunks: string[], failAfter = false): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk))
      if (failAfter) controller.error(new Error('client went away'))
      else controller.close()
    },
  })
}

describe('createDiskFiles', () => {
  it('round-trips an object streamed in chunks, with an MD5 ETag', async () => {
    const files = createDiskFiles(dir)
    expect(await files.put('c1/e1/actions.npz', streamOf(['abc', 'def']))).toEqual({ size: 6, etag: md5('abcdef') })
    expect(await readFile(join(dir, 'c1/e1/actions.npz'), 'utf8')).toBe('abcdef')
    const object = await files.get('c1/e1/actions.npz')
    expect(object).toMatchObject({ size: 6, etag: md5('abcdef') })
    expect(await new Response(object!.body).text()).toBe('abcdef')
  })

  it('reads back objects of any size exactly: empty, small (one chunk) and past 4 MiB (streamed)', async () => {
    const files = createDiskFiles(dir)
    const storage = createLocalStorage({ files, secret: 's' })
    const now = new Date('2030-01-01T00:00:00Z')
    for (const size of [0, 1, 4 * 1024 * 1024, 4 * 1024 * 1024 + 1, 9 * 1024 * 1024 + 7]) {
      const bytes = new Uint8Array(size)
      for (let i = 0; i < size; i++) bytes[i] = (i * 2654435761) >>> 24
      const key = `c1/e1/size-${size}.npz`
      await files.put(key, new Response(bytes).body!)
      const object = await files.get(key)
      expect(object).toMatchObject({ size, etag: createHash('md5').update(bytes).digest('hex') })
      const read = new Uint8Array(await new Response(object!.body).arrayBuffer())
      expect(read.byteLength).toBe(size)
      expect(Buffer.compare(read, bytes)).toBe(0)
      if (size < 2) continue
      // A range off both ends of the object, through the store's GET.
      const get = await storage.presignGet({ key, origin: 'http://127.0.0.1:8787', now, expiresInSeconds: 900 })
      const ranged = await storage.handle!(new Request(get.url, { headers: { range: `bytes=1-${size - 2}` } }), now)
      expect(ranged.status).toBe(206)
      expect(Buffer.compare(new Uint8Array(await ranged.arrayBuffer()), bytes.subarray(1, size - 1))).toBe(0)
    }
  })

  it('overwrites, and recomputes the ETag when its sidecar is gone', async () => {
    const files = createDiskFiles(dir)
    await files.put('k', streamOf(['one']))
    await files.put('k', streamOf(['two!']))
    await rm(join(dir, '.meta'), { recursive: true })
    const object = await files.get('k')
    expect(object).toMatchObject({ size: 4, etag: md5('two!') })
    // A small object comes as its bytes: sent with its length on every runtime.
    expect(object!.body).toBeInstanceOf(Uint8Array)
    expect(new TextDecoder().decode(object!.body as Uint8Array)).toBe('two!')
  })

  it('reads a byte range from its start, and null for a missing object', async () => {
    const files = createDiskFiles(dir)
    await files.put('c1/e1/video.mp4', streamOf(['0123', '4567', '89']))
    expect(await new Response(await files.getRange!('c1/e1/video.mp4', 7, 9)).text()).toBe('789')
    expect(await new Response(await files.getRange!('c1/e1/video.mp4', 0, 0)).text()).toBe('0')
    expect(await files.getRange!('c1/nothing.npz', 0, 1)).toBeNull()
  })

  it('returns null for a missing object', async () => {
    const files = createDiskFiles(dir)
    expect(await files.get('c1/nothing.npz')).toBeNull()
    await files.put('c1/e1/x', streamOf(['x']))
    expect(await files.get('c1/e1')).toBeNull()
    expect(await files.get('c1/e1/x/y')).toBeNull()
  })

  it('leaves nothing behind when the upload aborts', async () => {
    const files = createDiskFiles(dir)
    await expect(files.put('c1/e1/video.mp4', streamOf(['partial'], true))).rejects.toThrow('client went away')
    expect(await files.get('c1/e1/video.mp4')).toBeNull()
    expect(await readdir(join(dir, 'c1/e1'))).toEqual([])
    expect(await readdir(join(dir, '.uploads/put'))).toEqual([])
  })

  it('sweeps the single-PUT files a server that died mid-upload left, once they are a day old', async () => {
    const temps = join(dir, '.uploads/put')
    await mkdir(temps, { recursive: true })
    await writeFile(join(temps, 'abandoned.tmp'), 'half an upload')
    const dayAndMinuteAgo = new Date(Date.now() - STALE_TEMP_MS - 60_000)
    await utimes(join(temps, 'abandoned.tmp'), dayAndMinuteAgo, dayAndMinuteAgo)
    await writeFile(join(temps, 'in-flight.tmp'), 'still arriving')
    const files = createDiskFiles(dir)
    await files.put('c1/e1/actions.npz', streamOf(['npz']))
    expect(await readdir(temps)).toEqual(['in-flight.tmp'])
    expect(await readFile(join(dir, 'c1/e1/actions.npz'), 'utf8')).toBe('npz')
  })

  it('stores nothing, and keeps the previous version, when the body is not the MD5 it was sent with', async () => {
    const files = createDiskFiles(dir)
    await files.put('c1/e1/video.mp4', streamOf(['old']))
    await expect(files.put('c1/e1/video.mp4', streamOf(['new']), { md5: md5('other') })).rejects.toMatchObject({ code: 'BadDigest', status: 400 })
    expect(await new Response((await files.get('c1/e1/video.mp4'))!.body).text()).toBe('old')
    expect(await readdir(join(dir, '.uploads/put'))).toEqual([])
    expect(await files.put('c1/e1/video.mp4', streamOf(['new']), { md5: md5('new') })).toEqual({ size: 3, etag: md5('new') })
  })

  it('keeps the previous version when an overwrite aborts', async () => {
    const files = createDiskFiles(dir)
    await files.put('k', streamOf(['old']))
    await expect(files.put('k', streamOf(['new'], true))).rejects.toThrow()
    const object = await files.get('k')
    expect(await new Response(object!.body).text()).toBe('old')
    expect(object!.etag).toBe(md5('old'))
  })

  it('rejects traversal, absolute and reserved keys', async () => {
    const files = createDiskFiles(join(dir, 'objects'))
    for (const key of ['../escape', 'a/../../escape', '/etc/passwd', '..', 'a//b', '.meta/x', 'a\\..\\b']) {
      await expect(files.put(key, streamOf(['x']))).rejects.toMatchObject({ code: 'invalid' })
      await expect(files.get(key)).rejects.toMatchObject({ code: 'invalid' })
    }
    expect(await readdir(dir)).toEqual([])
  })
})

describe('built-in store on disk with node:crypto hashing', () => {
  it('serves a presigned PUT and GET end to end', async () => {
    const storage = createLocalStorage({ files: createDiskFiles(dir), secret: 's', sha256: NodeSha256 })
    const now = new Date('2030-01-01T00:00:00Z')
    const origin = 'http://127.0.0.1:8787'
    const key = 'c1/e1/sensors.npz'
    const put = await storage.presignPut({ key, contentType: 'application/octet-stream', origin, now, expiresInSeconds: 1800 })
    const init = {
      method: 'PUT',
      body: streamOf(['npz', 'bytes']),
      headers: { 'content-type': 'application/octet-stream', 'content-length': '8' },
      duplex: 'half',
    }
    const stored = await storage.handle(new Request(put.url, init as RequestInit), now)
    expect(stored.status).toBe(200)
    expect(stored.headers.get('etag')).toBe(`"${md5('npzbytes')}"`)

    const get = await storage.presignGet({ key, origin, now, expiresInSeconds: 900 })
    const read = await storage.handle(new Request(get.url), now)
    expect(read.headers.get('content-length')).toBe('8')
    expect(await read.text()).toBe('npzbytes')

    // Last-Modified is the file's change time, and the date conditions use it.
    const { mtime } = await stat(join(dir, key))
    expect(read.headers.get('last-modified')).toBe(mtime.toUTCString())
    const since = (header: string, date: Date) => storage.handle(new Request(get.url, { headers: { [header]: date.toUTCString() } }), now)
    const notModified = await since('if-modified-since', mtime)
    expect([notModified.status, notModified.headers.get('last-modified'), notModified.headers.get('etag')]).toEqual([
      304,
      mtime.toUTCString(),
      `"${md5('npzbytes')}"`,
    ])
    expect((await since('if-modified-since', new Date(mtime.getTime() - 2000))).status).toBe(200)
    expect((await since('if-unmodified-since', new Date(mtime.getTime() - 2000))).status).toBe(412)
    expect((await since('if-unmodified-since', mtime)).status).toBe(200)
  })
})

describe('createDiskFiles multipart', () => {
  it('keeps parts on disk, lists them, forgets a part that failed midway, and joins them in order', async () => {
    const files = createDiskFiles(dir)
    const multipart = files.multipart!
    const id = await multipart.create('c1/e1/video.mp4')
    expect(await multipart.putPart('c1/e1/video.mp4', id, 2, streamOf(['world']))).toEqual({ size: 5, etag: md5('world') })
    await expect(multipart.putPart('c1/e1/video.mp4', id, 1, streamOf(['hel'], true))).rejects.toThrow('client went away')
    expect(await multipart.listParts('c1/e1/video.mp4', id)).toEqual([{ partNumber: 2, size: 5, etag: md5('world') }])
    await multipart.putPart('c1/e1/video.mp4', id, 1, streamOf(['hello ']))
    expect((await readdir(join(dir, '.uploads', id))).filter((name) => name.endsWith('.tmp'))).toEqual([])
    expect(await multipart.assemble('c1/e1/video.mp4', id, [1, 2], 'abc-2')).toEqual({ size: 11, etag: 'abc-2' })
    expect(await readFile(join(dir, 'c1/e1/video.mp4'), 'utf8')).toBe('hello world')
    expect(await files.head!('c1/e1/video.mp4')).toEqual({ size: 11, etag: 'abc-2' })
    await expect(multipart.listParts('c1/e1/video.mp4', id)).rejects.toMatchObject({ code: 'NoSuchUpload' })
  })

  it('aborts, and refuses an upload id under another key', async () => {
    const files = createDiskFiles(dir)
    const id = await files.multipart!.create('c1/e1/sensors.npz')
    await files.multipart!.putPart('c1/e1/sensors.npz', id, 1, streamOf(['x']))
    await expect(files.multipart!.listParts('c2/e1/sensors.npz', id)).rejects.toMatchObject({ code: 'NoSuchUpload' })
    await files.multipart!.abort('c1/e1/sensors.npz', id)
    await expect(files.multipart!.putPart('c1/e1/sensors.npz', id, 2, streamOf(['y']))).rejects.toMatchObject({ code: 'NoSuchUpload' })
    expect(await readdir(join(dir, '.uploads'))).toEqual([])
    expect(await files.usage!('c1/')).toBe(0)
  })
})
