/**
 * `BlobFiles` over a Cloudflare R2 bucket binding, so the built-in object
 * store (`createLocalStorage`: the same SigV4 URLs, verified by the Worker
 * itself) keeps its bytes in R2. Both directions stream: `put` hands the
 * request body to R2 as is, `get` returns R2's body stream.
 *
 * R2 stores an object atomically, so a failed or aborted upload leaves
 * nothing behind, as `BlobFiles` requires. Like S3, R2 needs the length of a
 * streamed body up front: an upload sent without `Content-Length` (chunked)
 * is refused and nothing is stored.
 *
 * @example
 * const storage = createLocalStorage({ files: createR2Files(env.BUCKET), secret: env.EPISODIC_STORAGE_SECRET })
 */
import type { BlobFiles } from '../../src/storage/types.ts'

/** What this module uses of an R2 object (R2's `R2Object`). */
export interface R2ObjectLike {
  size: number
  /** Hex MD5 for single-part uploads, without quotes (R2's `etag`, not `httpEtag`). */
  etag: string
}

/** What this module uses of an R2 bucket binding (R2's `R2Bucket`). */
export interface R2BucketLike {
  put(key: string, value: ReadableStream<Uint8Array>): Promise<R2ObjectLike | null>
  get(key: string): Promise<(R2ObjectLike & { body: ReadableStream<Uint8Array> }) | null>
}

/** Blob files kept in an R2 bucket under their object keys, unchanged. */
export function createR2Files(bucket: R2BucketLike): BlobFiles {
  return {
    async put(key, body) {
      const object = await bucket.put(key, body)
      // null only for conditional puts, which are not used here.
      if (!object) throw new Error(`R2 did not store ${key}`)
      return { size: object.size, etag: object.etag }
    },
    async get(key) {
      const object = await bucket.get(key)
      return object ? { body: object.body, size: object.size, etag: object.etag } : null
    },
  }
}
