/**
 * In-memory `BlobFiles` for tests and throwaway demos. Unlike the disk
 * adapter it does hold each object whole (that is its storage), but it keeps
 * the contract that matters to callers: an upload that fails midway stores
 * nothing, and a finished one is visible atomically.
 */
import { toHex } from '../crypto.ts'
import type { BlobFiles } from './types.ts'

/**
 * Creates an empty in-memory blob store. ETags are the first 32 hex digits
 * of the body's SHA-256 (WebCrypto has no MD5); they are stable per content,
 * which is all callers rely on.
 *
 * @example
 * const storage = createLocalStorage({ files: createMemoryFiles(), secret: 'test' })
 */
export function createMemoryFiles(): BlobFiles {
  const objects = new Map<string, { bytes: Uint8Array; etag: string }>()
  return {
    async put(key, body) {
      const chunks: Uint8Array[] = []
      let size = 0
      for (const reader = body.getReader(); ; ) {
        const { done, value } = await reader.read()
        if (done) break
        chunks.push(value)
        size += value.byteLength
      }
      const bytes = new Uint8Array(size)
      let offset = 0
      for (const chunk of chunks) {
        bytes.set(chunk, offset)
        offset += chunk.byteLength
      }
      const etag = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))).slice(0, 32)
      objects.set(key, { bytes, etag })
      return { size, etag }
    },
    async get(key) {
      const object = objects.get(key)
      if (!object) return null
      const { bytes, etag } = object
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice())
          controller.close()
        },
      })
      return { body, size: bytes.byteLength, etag }
    },
  }
}
