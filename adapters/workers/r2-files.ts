/**
 * `BlobFiles` over a Cloudflare R2 bucket binding, so the built-in object
 * store (`createLocalStorage`: the same SigV4 URLs, verified by the Worker
 * itself) keeps its bytes in R2. Both directions stream: `put` hands the
 * request body to R2 as is, `get` returns R2's body stream.
 *
 * R2 stores an object atomically, so a failed or aborted upload leaves
 * nothing behind, as `BlobFiles` requires. Like S3, R2 needs the length of a
 * streamed body up front; the store answers 411 to an upload without one
 * before it gets here.
 *
 * Multipart uploads use R2's own (`createMultipartUpload`,
 * `resumeMultipartUpload`), which joins parts inside R2. The binding cannot
 * list an upload's parts, so each stored part is also recorded as an empty
 * object `.uploads/<upload id>/<part number>` whose custom metadata holds
 * its size and ETag; `.uploads/<upload id>` records the upload's key.
 *
 * @example
 * const storage = createLocalStorage({ files: createR2Files(env.BUCKET), secret: env.EPISODIC_STORAGE_SECRET })
 */
import { badDigest, type BlobFiles, type BlobMultipart, changedPart, noSuchUpload, StorageError, type StoredPart } from '../../src/storage/types.ts'

/** What this module uses of an R2 object (R2's `R2Object`). */
export interface R2ObjectLike {
  /** The object's size in bytes. */
  size: number
  /** Hex MD5 for single-part uploads, without quotes (R2's `etag`, not `httpEtag`). */
  etag: string
  /** The object's key (set on listed objects). */
  key?: string
  /** The string pairs stored with the object; multipart parts keep their size and ETag here. */
  customMetadata?: Record<string, string>
  /** When the object was stored (R2's `uploaded`): the built-in store's Last-Modified. */
  uploaded?: Date
}

/** What this module uses of an R2 multipart upload (R2's `R2MultipartUpload`). */
export interface R2MultipartUploadLike {
  /** The upload's id, kept to resume it later. */
  uploadId: string
  /** Stores one part and returns its number and ETag. */
  uploadPart(partNumber: number, value: ReadableStream<Uint8Array>): Promise<{ partNumber: number; etag: string }>
  /** Joins the named parts, in order, into the object. */
  complete(parts: { partNumber: number; etag: string }[]): Promise<R2ObjectLike>
  /** Discards the upload and its parts. */
  abort(): Promise<void>
}

/** What this module uses of an R2 bucket binding (R2's `R2Bucket`); the optional members enable HEAD, quota and multipart. */
export interface R2BucketLike {
  /** Stores an object whole, replacing any with the same key. */
  put(
    key: string,
    value: ReadableStream<Uint8Array> | string,
    options?: { customMetadata?: Record<string, string>; md5?: string },
  ): Promise<R2ObjectLike | null>
  /** Reads an object (or, with `range`, a byte range of it) with its body, or `null` when there is none. */
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<(R2ObjectLike & { body: ReadableStream<Uint8Array> }) | null>
  /** Reads an object's size and ETag without its body, or `null` when there is none. */
  head?(key: string): Promise<R2ObjectLike | null>
  /** Deletes one object or several; missing keys are not an error. */
  delete?(keys: string | string[]): Promise<void>
  /** Lists the objects under a prefix, a page at a time. */
  list?(options: { prefix: string; cursor?: string; include?: 'customMetadata'[] }): Promise<{ objects: R2ObjectLike[]; truncated: boolean; cursor?: string }>
  /** Starts a multipart upload of `key`. */
  createMultipartUpload?(key: string): Promise<R2MultipartUploadLike>
  /** Returns a handle on a multipart upload started earlier, by its id. */
  resumeMultipartUpload?(key: string, uploadId: string): R2MultipartUploadLike
}

const UPLOADS = '.uploads/'

/** Blob files kept in an R2 bucket under their object keys, unchanged. */
export function createR2Files(bucket: R2BucketLike): BlobFiles {
  const files: BlobFiles = {
    async put(key, body, options) {
      // R2 checks the digest itself and stores nothing on a mismatch: "The MD5 checksum you
      // specified did not match what we received. (10037)" under workerd.
      const object = await bucket.put(key, body, options?.md5 === undefined ? undefined : { md5: options.md5 }).catch((error: unknown) => {
        throw options?.md5 !== undefined && /md5|digest|checksum|\(10037\)/i.test(String((error as Error)?.message)) ? badDigest() : error
      })
      // null only for conditional puts, which are not used here.
      if (!object) throw new Error(`R2 did not store ${key}`)
      return { size: object.size, etag: object.etag }
    },
    async get(key) {
      const object = await bucket.get(key)
      return object ? { body: object.body, size: object.size, etag: object.etag, ...(object.uploaded ? { lastModified: object.uploaded } : {}) } : null
    },
    async getRange(key, start, end) {
      // R2 reads the range itself; its body has a known length, so the answer keeps Content-Length.
      const object = await bucket.get(key, { range: { offset: start, length: end - start + 1 } })
      return object ? object.body : null
    },
  }
  if (bucket.head) {
    const head = bucket.head.bind(bucket)
    files.head = async (key) => {
      const object = await head(key)
      return object ? { size: object.size, etag: object.etag } : null
    }
  }
  if (bucket.list) files.usage = (prefix) => sumUnder(bucket, prefix)
  if (bucket.createMultipartUpload && bucket.resumeMultipartUpload && bucket.list && bucket.delete) {
    files.multipart = r2Multipart(bucket as Required<R2BucketLike>)
  }
  return files
}

async function sumUnder(bucket: R2BucketLike, prefix: string): Promise<number> {
  let total = 0
  let cursor: string | undefined
  do {
    const page = await bucket.list!({ prefix, cursor })
    for (const object of page.objects) total += object.size
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor)
  return total
}

function r2Multipart(bucket: Required<R2BucketLike>): BlobMultipart {
  async function checkUpload(key: string, uploadId: string): Promise<void> {
    const record = await bucket.head(`${UPLOADS}${uploadId}`)
    if (!record || record.customMetadata?.key !== key) throw noSuchUpload()
  }

  async function partRecords(uploadId: string): Promise<StoredPart[]> {
    const parts: StoredPart[] = []
    let cursor: string | undefined
    do {
      const page = await bucket.list({ prefix: `${UPLOADS}${uploadId}/`, cursor, include: ['customMetadata'] })
      for (const object of page.objects) {
        const meta = object.customMetadata ?? {}
        parts.push({ partNumber: Number(meta.partNumber), size: Number(meta.size), etag: meta.etag ?? '' })
      }
      cursor = page.truncated ? page.cursor : undefined
    } while (cursor)
    return parts.sort((a, b) => a.partNumber - b.partNumber)
  }

  async function forget(uploadId: string, parts: StoredPart[]): Promise<void> {
    await bucket.delete([`${UPLOADS}${uploadId}`, ...parts.map((part) => `${UPLOADS}${uploadId}/${part.partNumber}`)])
  }

  return {
    async create(key) {
      const upload = await bucket.createMultipartUpload(key)
      await bucket.put(`${UPLOADS}${upload.uploadId}`, '', { customMetadata: { key } })
      return upload.uploadId
    },
    async putPart(key, uploadId, partNumber, body, length) {
      await checkUpload(key, uploadId)
      // R2 takes the request's own body (its length is known; a piped copy's
      // would not be) and checks it against that length.
      if (length === undefined || !Number.isSafeInteger(length)) {
        throw new StorageError('MissingContentLength', 411, 'You must provide the Content-Length HTTP header.')
      }
      const size = length
      const part = await bucket.resumeMultipartUpload(key, uploadId).uploadPart(partNumber, body)
      await bucket.put(`${UPLOADS}${uploadId}/${partNumber}`, '', { customMetadata: { partNumber: String(partNumber), size: String(size), etag: part.etag } })
      return { size, etag: part.etag }
    },
    async listParts(key, uploadId) {
      await checkUpload(key, uploadId)
      return partRecords(uploadId)
    },
    async assemble(key, uploadId, partNumbers, _etag, partEtags) {
      await checkUpload(key, uploadId)
      const parts = await partRecords(uploadId)
      const byNumber = new Map(parts.map((part) => [part.partNumber, part]))
      partNumbers.forEach((n, i) => {
        if (partEtags && byNumber.get(n)?.etag !== partEtags[i]) throw changedPart(n)
      })
      const object = await bucket.resumeMultipartUpload(key, uploadId).complete(partNumbers.map((n) => ({ partNumber: n, etag: byNumber.get(n)!.etag })))
      await forget(uploadId, parts)
      // R2 computes the joined object's ETag itself; HEAD reports that one.
      return { size: object.size, etag: object.etag }
    },
    async abort(key, uploadId) {
      await checkUpload(key, uploadId)
      const parts = await partRecords(uploadId)
      await bucket.resumeMultipartUpload(key, uploadId).abort()
      await forget(uploadId, parts)
    },
  }
}
