/**
 * `BlobFiles` on the local disk, for the built-in object store under Node
 * (Bun and Deno run it too through their node:fs). Objects live at
 * `<dir>/<key>`, so the folder reads like the bucket; each object's MD5 ETag
 * sits in `<dir>/.meta/<key>.json`, computed while the upload streams.
 *
 * An upload goes to a temporary file under `<dir>/.uploads/put/` and is
 * renamed into place only once the body has fully arrived, so an aborted or failed upload
 * leaves nothing behind and readers never see half an object (a full disk
 * included: the write fails, the temporary file is removed).
 *
 * Multipart uploads live under `<dir>/.uploads/<upload id>/`: with the part
 * size planned at create, each part is written at its offset in one file,
 * which completing renames into place (files-multipart.ts).
 */
import { createHash, randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import { Readable } from 'node:stream'
import { EpisodicError } from '../../src/errors.ts'
import { isSafeKey } from '../../src/storage/keys.ts'
import { badDigest, type BlobFiles } from '../../src/storage/types.ts'
import { diskMultipart, SWEEP_EVERY_MS } from './files-multipart.ts'

const META = '.meta'
/**
 * Objects up to this size are read whole and sent as their bytes (one chunk,
 * with a `Content-Length` on every runtime, Bun included):
 * measured on bench/replay-e2e (2.5 MB objects), 25-30% less of the server's
 * CPU per download than streaming them in 64 KiB pieces. Larger ones stream.
 */
const WHOLE_READ_MAX = 4 * 1024 * 1024
/** Folder of unfinished multipart uploads (a reserved first key segment, like `.meta`). */
export const UPLOADS = '.uploads'

interface Meta {
  etag: string
  size: number
  mtimeMs: number
}

/**
 * Creates disk-backed blob files rooted at `dir` (created on first upload).
 * Keys with `..`, `.` or empty segments, absolute paths, backslashes or the
 * reserved first segment `.meta` are rejected with an `invalid` error.
 *
 * @example
 * const storage = createLocalStorage({ files: createDiskFiles('.episodic/objects'), secret })
 */
export function createDiskFiles(dir: string): BlobFiles {
  const root = resolve(dir)

  function pathsOf(key: string): { data: string; meta: string } {
    const data = resolve(root, key)
    const first = key.split('/')[0]
    if (!isSafeKey(key) || first === META || first === UPLOADS || !data.startsWith(root + sep)) {
      throw new EpisodicError('invalid', `invalid object key: ${JSON.stringify(key)}`)
    }
    return { data, meta: join(root, META, `${key}.json`) }
  }

  /** Records a finished file's ETag, then moves it into place as `key`. */
  async function publish(key: string, temp: string, etag: string): Promise<number> {
    const { data, meta } = pathsOf(key)
    await mkdir(dirname(data), { recursive: true })
    const info = await stat(temp)
    await writeAtomically(meta, JSON.stringify({ etag, size: info.size, mtimeMs: info.mtimeMs } satisfies Meta))
    await rename(temp, data)
    return info.size
  }

  async function head(key: string): Promise<{ size: number; etag: string } | null> {
    const { data, meta } = pathsOf(key)
    const info = await stat(data).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null
      throw error
    })
    if (!info?.isFile()) return null
    const known = await readMeta(meta)
    const etag = known && known.size === info.size && known.mtimeMs === info.mtimeMs ? known.etag : await md5Of(data)
    return { size: info.size, etag }
  }

  // Single PUTs are written under `.uploads/put/` and renamed into place; a file
  // there that nothing has written to for a day belonged to a server that died
  // mid-upload. Storing an object sweeps them, at most once an hour.
  const temps = join(root, UPLOADS, 'put')
  let tempsSweptAt = 0

  return {
    async put(key, body, options) {
      const { data } = pathsOf(key)
      await mkdir(dirname(data), { recursive: true })
      await mkdir(temps, { recursive: true })
      if (Date.now() - tempsSweptAt >= SWEEP_EVERY_MS) {
        tempsSweptAt = Date.now()
        await sweepStaleTemps(temps, tempsSweptAt - STALE_TEMP_MS).catch(() => {})
      }
      const temp = join(temps, `${randomUUID()}.tmp`)
      const { etag, size } = await writeStreamed(temp, body)
      try {
        if (options?.md5 !== undefined && options.md5 !== etag) throw badDigest()
        await publish(key, temp, etag)
        return { size, etag }
      } catch (error) {
        await rm(temp, { force: true })
        throw error
      }
    },

    head,

    async usage(prefix) {
      if (!isSafeKey(prefix.replace(/\/+$/, ''))) return 0
      return await sizeOfTree(resolve(root, prefix))
    },

    multipart: diskMultipart({ uploads: join(root, UPLOADS), writeStreamed, writeInto, publish, head, pathsOf }),

    async get(key) {
      const { data, meta } = pathsOf(key)
      const handle = await open(data, 'r').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null
        throw error
      })
      if (!handle) return null
      let streamed = false
      try {
        const info = await handle.stat()
        if (!info.isFile()) return null
        const known = await readMeta(meta)
        // The sidecar is trusted only if it describes this very file version.
        const etag = known && known.size === info.size && known.mtimeMs === info.mtimeMs ? known.etag : await md5Of(data)
        if (info.size > WHOLE_READ_MAX) {
          // The stream closes the handle when it ends or is cancelled.
          const body = Readable.toWeb(handle.createReadStream()) as unknown as ReadableStream<Uint8Array>
          streamed = true
          return { body, size: info.size, etag, lastModified: info.mtime }
        }
        // A buffer of its own (readFile allocates it), never a shared one.
        const bytes = (await handle.readFile()) as Uint8Array<ArrayBuffer>
        return { body: bytes, size: info.size, etag, lastModified: info.mtime }
      } finally {
        // Closed on every other way out, an error included (a leaked handle counts against EMFILE).
        if (!streamed) await handle.close()
      }
    },
    async getRange(key, start, end) {
      const handle = await open(pathsOf(key).data, 'r').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null
        throw error
      })
      if (!handle) return null
      if (end - start + 1 > WHOLE_READ_MAX) return Readable.toWeb(handle.createReadStream({ start, end })) as unknown as ReadableStream<Uint8Array>
      // A small range (a video seek, a tail) is read whole, as small objects are: sent with its length.
      try {
        const bytes = new Uint8Array(end - start + 1)
        let done = 0
        while (done < bytes.length) {
          const { bytesRead } = await handle.read(bytes, done, bytes.length - done, start + done)
          if (bytesRead === 0) break
          done += bytesRead
        }
        return bytes.subarray(0, done) as Uint8Array<ArrayBuffer>
      } finally {
        await handle.close()
      }
    },
  }
}

/** A single-PUT file untouched this long was abandoned (an upload writes to it as it arrives). */
export const STALE_TEMP_MS = 24 * 60 * 60 * 1000

/** Removes the single-PUT files in `folder` last written before `cutoffMs` (epoch ms); returns their names. */
export async function sweepStaleTemps(folder: string, cutoffMs: number): Promise<string[]> {
  const removed: string[] = []
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    if (!name.endsWith('.tmp')) continue
    const path = join(folder, name)
    const modified = await stat(path).then((info) => info.mtimeMs, () => Infinity)
    if (modified >= cutoffMs) continue
    await rm(path, { force: true })
    removed.push(name)
  }
  return removed
}

/**
 * Streams `body` into a new file at `path`, hashing as it goes. On any
 * failure (the uploader went away, the disk is full) the file is removed and
 * the error rethrown: nothing half-written stays behind.
 */
export async function writeStreamed(path: string, body: ReadableStream<Uint8Array>): Promise<{ etag: string; size: number }> {
  // The file is opened before the body is read, so a failure always finds it to remove.
  const handle = await open(path, 'wx')
  try {
    const written = await writeInto(handle, body, 0, Infinity)
    await handle.close()
    return written
  } catch (error) {
    await handle.close().catch(() => {})
    await rm(path, { force: true })
    throw error
  }
}

/**
 * Streams `body` into an open file from byte `position` on, hashing as it
 * goes; returns its MD5 and size. Throws, with the body cancelled, when the
 * body fails or runs past `limit` bytes (nothing is written past the limit).
 */
export async function writeInto(
  handle: FileHandle,
  body: ReadableStream<Uint8Array>,
  position: number,
  limit: number,
): Promise<{ etag: string; size: number }> {
  const md5 = createHash('md5')
  let size = 0
  const reader = body.getReader()
  let writing: Promise<void> = Promise.resolve()
  try {
    // Chunks arrive at 16-64 KiB; each 1 MiB of them goes out in one pwritev (no copy into a
    // bigger buffer), while the next MiB is read: the disk write overlaps the network read.
    let batch: Uint8Array[] = []
    let batched = 0
    let at = position
    const flush = async () => {
      await writing
      if (batched === 0) return
      writing = writeAll(handle, batch, at)
      writing.catch(() => {}) // observed at the next flush; until then the read goes on
      at += batched
      batch = []
      batched = 0
    }
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > limit) throw new Error(`the body is longer than the ${limit} bytes declared`)
      md5.update(value)
      batch.push(value)
      batched += value.byteLength
      if (batched >= WRITE_BATCH) await flush()
    }
    await flush()
    await writing
    return { etag: md5.digest('hex'), size }
  } catch (error) {
    await reader.cancel(error).catch(() => {})
    // No write may still run when the caller closes the file and removes it.
    await writing.catch(() => {})
    throw error
  }
}

/** Writes `buffers` at `position`, all of them (pwritev may write less than asked). */
async function writeAll(handle: FileHandle, buffers: Uint8Array[], position: number): Promise<void> {
  let rest = buffers
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest, position)
    position += bytesWritten
    const left: Uint8Array[] = []
    for (const buffer of rest) {
      if (bytesWritten >= buffer.byteLength) bytesWritten -= buffer.byteLength
      else {
        left.push(buffer.subarray(bytesWritten))
        bytesWritten = 0
      }
    }
    rest = left
  }
}

/** Bytes gathered before one write to disk. */
const WRITE_BATCH = 1024 * 1024

/** Bytes of the regular files under `dir` (unfinished uploads live under `.uploads/`, outside every client's folder). */
async function sizeOfTree(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
  let total = 0
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += await sizeOfTree(path)
    else if (entry.isFile()) total += (await stat(path)).size
  }
  return total
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const temp = `${path}.${randomUUID()}.tmp`
  await writeFile(temp, text)
  await rename(temp, path)
}

async function readMeta(path: string): Promise<Meta | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Meta
  } catch {
    return null
  }
}

async function md5Of(path: string): Promise<string> {
  const md5 = createHash('md5')
  for await (const chunk of createReadStream(path)) md5.update(chunk as Buffer)
  return md5.digest('hex')
}
