/**
 * S3's multipart protocol on the built-in store. The service creates, lists,
 * completes and aborts uploads in process; clients send each part with a
 * presigned `PUT /storage/<key>?partNumber=N&uploadId=ID`, which the store's
 * `handle` passes to `putPart`. The rules S3 applies at completion (order,
 * ETags, 5 MiB parts) are checked here, before the blob layer joins the parts.
 */
import { isSafeKey } from './keys.ts'
import { checkCompletion, MAX_PARTS, multipartEtag } from './multipart-rules.ts'
import type { S3Error } from './s3-error.ts'
import { type BlobMultipart, type MultipartStore, NO_SUCH_UPLOAD_MESSAGE, type PresignInput, type SignedUrl, StorageError } from './types.ts'

/** Upload ids the blob layers mint (hex on disk, R2's own on Workers): printable, no spaces. */
const UPLOAD_ID = /^[\x21-\x7e]{1,1024}$/

/** What a request's query says about a part: none (a whole object), a part, or an S3 error. */
export type PartTarget = { uploadId?: undefined; partNumber?: undefined } | { uploadId: string; partNumber: number } | { error: S3Error }

/** Reads `partNumber` and `uploadId` from a store request's query. */
export function partTarget(query: URLSearchParams): PartTarget {
  const uploadId = query.get('uploadId')
  const partNumber = query.get('partNumber')
  if (uploadId === null && partNumber === null) return {}
  if (uploadId === null || !UPLOAD_ID.test(uploadId)) {
    return { error: { status: 404, code: 'NoSuchUpload', message: NO_SUCH_UPLOAD_MESSAGE } }
  }
  const number = partNumber !== null && /^\d{1,5}$/.test(partNumber) ? Number(partNumber) : NaN
  if (!(number >= 1 && number <= MAX_PARTS)) {
    return { error: { status: 400, code: 'InvalidArgument', message: `Part number must be an integer between 1 and ${MAX_PARTS}, inclusive.` } }
  }
  return { uploadId, partNumber: number }
}

type Sign = (method: 'PUT', input: PresignInput, contentType: undefined, query: string) => Promise<SignedUrl>
type Quota = (key: string, length: number) => Promise<S3Error | null>

/** The built-in store's `MultipartStore` over a blob layer's multipart parts. */
export function localMultipart(blobs: BlobMultipart, sign: Sign, quota?: Quota): MultipartStore {
  const checked = (key: string, uploadId?: string) => {
    if (!isSafeKey(key)) throw new StorageError('InvalidArgument', 400, 'Invalid object key.')
    if (uploadId !== undefined && !UPLOAD_ID.test(uploadId)) throw new StorageError('NoSuchUpload', 404, 'The specified upload does not exist.')
  }
  return {
    async create(key, _contentType, partSize) {
      checked(key)
      return { uploadId: await blobs.create(key, partSize) }
    },
    presignPart(input) {
      checked(input.key, input.uploadId)
      return sign('PUT', input, undefined, `?partNumber=${input.partNumber}&uploadId=${encodeURIComponent(input.uploadId)}`)
    },
    async listParts(key, uploadId) {
      checked(key, uploadId)
      return await blobs.listParts(key, uploadId)
    },
    async complete(key, uploadId, parts) {
      checked(key, uploadId)
      const chosen = checkCompletion(parts, await blobs.listParts(key, uploadId))
      // The parts count against the client's quota once they are an object.
      const over = await quota?.(key, chosen.reduce((sum, part) => sum + part.size, 0))
      if (over) throw new StorageError(over.code, over.status, over.message)
      const etag = multipartEtag(chosen)
      // The parts' ETags go along: a part re-sent between this check and the join fails it.
      const joined = await blobs.assemble(key, uploadId, chosen.map((part) => part.partNumber), etag, chosen.map((part) => part.etag))
      return { etag: joined.etag }
    },
    async abort(key, uploadId) {
      checked(key, uploadId)
      await blobs.abort(key, uploadId)
    },
  }
}
