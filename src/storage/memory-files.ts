/**
 * In-memory `BlobFiles` for tests and throwaway demos. Unlike the disk
 * adapter it does hold each object whole (that is its storage), but it keeps
 * the contract that matters to callers: an upload that fails midway stores
 * nothing, and a finished one is visible atomically. Multipart parts are
 * kept the same way and joined at completion.
 */
import { concatBytes } from '../bytes.ts'
import { md5 } from '@noble/hashes/legacy.js'
import { toHex } from '../crypto.ts'
import { badDigest, type BlobFiles, changedPart, noSuchUpload, type StoredPart } from './types.ts'

/**
 * Creates an empty in-memory blob store. ETags are MD5s in hex, as S3's
 * (and the disk store's) are; they are stable per content,
 * which is all callers rely on.
 *
 * @example
 * const storage = createLocalStorage({ files: createMemoryFiles(), secret: 'test' })
 */
export function createMemoryFiles(): BlobFiles {
  const objects = new Map<string, { bytes: Uint8Array; etag: string }>()
  const uploads = new Map<string, { key: string; parts: Map<number, { bytes: Uint8Array; etag: string }> }>()
  const uploadOf = (key: string, uploadId: string) => {
    const upload = uploads.get(uploadId)
    if (!upload || upload.key !== key) throw noSuchUpload()
    return upload
  }
  return {
    async put(key, body, options) {
      const bytes = await readAll(body)
      const etag = digest(bytes)
      if (options?.md5 !== undefined && options.md5 !== etag) throw badDigest()
      objects.set(key, { bytes, etag })
      return { size: bytes.byteLength, etag }
    },
    get(key) {
      const object = objects.get(key)
      if (!object) return Promise.resolve(null)
      const { bytes, etag } = object
      return Promise.resolve({ body: bytes.slice(), size: bytes.byteLength, etag })
    },
    getRange(key, start, end) {
      const object = objects.get(key)
      if (!object) return Promise.resolve(null)
      const piece = object.bytes.slice(start, end + 1)
      return Promise.resolve(new ReadableStream<Uint8Array>({ start: (controller) => (controller.enqueue(piece), controller.close()) }))
    },
    head(key) {
      const object = objects.get(key)
      return Promise.resolve(object ? { size: object.bytes.byteLength, etag: object.etag } : null)
    },
    usage(prefix) {
      let total = 0
      for (const [key, object] of objects) if (key.startsWith(prefix)) total += object.bytes.byteLength
      return Promise.resolve(total)
    },
    multipart: {
      create(key) {
        const uploadId = crypto.randomUUID().replaceAll('-', '')
        uploads.set(uploadId, { key, parts: new Map() })
        return Promise.resolve(uploadId)
      },
      async putPart(key, uploadId, partNumber, body) {
        uploadOf(key, uploadId)
        const bytes = await readAll(body)
        const etag = digest(bytes)
        // Looked up again: the upload may have been aborted while the body streamed.
        uploadOf(key, uploadId).parts.set(partNumber, { bytes, etag })
        return { size: bytes.byteLength, etag }
      },
      listParts: (key, uploadId) =>
        settled(() => {
          const parts: StoredPart[] = [...uploadOf(key, uploadId).parts].map(([partNumber, part]) => ({
            partNumber,
            size: part.bytes.byteLength,
            etag: part.etag,
          }))
          return parts.sort((a, b) => a.partNumber - b.partNumber)
        }),
      assemble: (key, uploadId, partNumbers, etag, partEtags) =>
        settled(() => {
          const upload = uploadOf(key, uploadId)
          partNumbers.forEach((n, i) => {
            if (partEtags && upload.parts.get(n)?.etag !== partEtags[i]) throw changedPart(n)
          })
          const bytes = concatBytes(partNumbers.map((n) => upload.parts.get(n)!.bytes))
          objects.set(key, { bytes, etag })
          uploads.delete(uploadId)
          return { size: bytes.byteLength, etag }
        }),
      abort: (key, uploadId) =>
        settled(() => {
          uploadOf(key, uploadId)
          uploads.delete(uploadId)
        }),
    },
  }
}

/** Runs `body` now, as an async function would: a throw becomes a rejected promise (`NoSuchUpload`). */
function settled<T>(body: () => T): Promise<T> {
  return new Promise((resolve) => resolve(body()))
}

async function readAll(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for (const reader = body.getReader();;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
  }
  return concatBytes(chunks)
}

/** S3's ETag of a whole object or part: its MD5 in hex. */
function digest(bytes: Uint8Array): string {
  return toHex(md5(bytes))
}
