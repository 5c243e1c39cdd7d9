/**
 * `BlobFiles` on the local disk, for the built-in object store under Node
 * (Bun and Deno run it too through their node:fs). Objects live at
 * `<dir>/<key>`, so the folder reads like the bucket; each object's MD5 ETag
 * sits in `<dir>/.meta/<key>.json`, computed while the upload streams.
 *
 * An upload goes to a temporary file beside its target and is renamed into
 * place only once the body has fully arrived, so an aborted or failed upload
 * leaves nothing behind and readers never see half an object.
 */
import { createHash, randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { EpisodicError } from '../../src/errors.ts'
import { isSafeKey } from '../../src/storage/keys.ts'
import type { BlobFiles } from '../../src/storage/types.ts'

const META = '.meta'

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
    if (!isSafeKey(key) || key.split('/')[0] === META || !data.startsWith(root + sep)) {
      throw new EpisodicError('invalid', `invalid object key: ${JSON.stringify(key)}`)
    }
    return { data, meta: join(root, META, `${key}.json`) }
  }

  return {
    async put(key, body) {
      const { data, meta } = pathsOf(key)
      await mkdir(dirname(data), { recursive: true })
      const temp = join(dirname(data), `.upload-${randomUUID()}.tmp`)
      const md5 = createHash('md5')
      let size = 0
      const measure = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          md5.update(chunk)
          size += chunk.length
          done(null, chunk)
        },
      })
      // The file is opened before the body is read: a write stream that opens
      // lazily can create its file after a failed pipeline's cleanup ran.
      const handle = await open(temp, 'wx')
      try {
        await pipeline(Readable.fromWeb(body as NodeReadableStream<Uint8Array>), measure, handle.createWriteStream())
        const etag = md5.digest('hex')
        await writeAtomically(meta, JSON.stringify({ etag, size, mtimeMs: (await stat(temp)).mtimeMs } satisfies Meta))
        await rename(temp, data)
        return { size, etag }
      } catch (error) {
        await handle.close().catch(() => {})
        await rm(temp, { force: true })
        throw error
      }
    },

    async get(key) {
      const { data, meta } = pathsOf(key)
      const handle = await open(data, 'r').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null
        throw error
      })
      if (!handle) return null
      const info = await handle.stat()
      if (!info.isFile()) {
        await handle.close()
        return null
      }
      const known = await readMeta(meta)
      // The sidecar is trusted only if it describes this very file version.
      const etag = known && known.size === info.size && known.mtimeMs === info.mtimeMs ? known.etag : await md5Of(data)
      const body = Readable.toWeb(handle.createReadStream()) as unknown as ReadableStream<Uint8Array>
      return { body, size: info.size, etag }
    },
  }
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
