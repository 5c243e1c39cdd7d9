/**
 * Object storage as the core sees it: something that mints SigV4-presigned
 * URLs for object keys. Two implementations: an S3-compatible bucket
 * (Cloudflare R2, AWS S3, MinIO) and the built-in local store served by the
 * app itself under `/storage/<key>`.
 */
export type ArtifactKind = 'video' | 'sensors' | 'actions'

/** Every artifact kind, in the order the API lists them. */
export const ARTIFACT_KINDS: readonly ArtifactKind[] = ['video', 'sensors', 'actions']

/** The Content-Type bound into each artifact's signed PUT URL (spec, "Artifact kinds"). */
export const ARTIFACT_CONTENT_TYPE: Record<ArtifactKind, string> = {
  video: 'video/mp4',
  sensors: 'application/octet-stream',
  actions: 'application/octet-stream',
}

/** File name of each artifact inside its episode's folder (contract, "Object keys"). */
export const ARTIFACT_FILE: Record<ArtifactKind, string> = {
  video: 'video.mp4',
  sensors: 'sensors.npz',
  actions: 'actions.npz',
}

/** `<client_id>/<episode_id>/<file>`, e.g. `c1/0b5e.../actions.npz`. */
export function objectKey(clientId: string, episodeId: string, kind: ArtifactKind): string {
  return `${clientId}/${episodeId}/${ARTIFACT_FILE[kind]}`
}

/** Signed upload URLs live 30 minutes (spec, "Limits"). */
export const UPLOAD_URL_SECONDS = 30 * 60

/** Signed GET URLs from the artifact route live 15 minutes (contract, "Read endpoints"). */
export const ARTIFACT_URL_SECONDS = 15 * 60

/** A presigned URL and the moment it stops working. */
export interface SignedUrl {
  /** The URL, with the SigV4 query parameters. */
  url: string
  /** When the signature expires (`now` + `expiresInSeconds`). */
  expiresAt: Date
}

/** What every presign needs: the object, the signing time and how long the URL lives. */
export interface PresignInput {
  /** The object key, `<client_id>/<episode_id>/<file>`. */
  key: string
  /** The signing time (from the app's clock, so tests can fix it). */
  now: Date
  /** How long the URL stays valid. */
  expiresInSeconds: number
  /**
   * Origin (`https://host:port`) the API request arrived on. The built-in
   * store signs URLs for this origin; S3-compatible stores ignore it.
   */
  origin: string
}

/**
 * The object storage capability the app is given (`createS3Storage` or
 * `createLocalStorage`): it signs URLs; the bytes never pass through the API.
 */
export interface ObjectStorage {
  /** Presigned PUT with `content-type` signed and `UNSIGNED-PAYLOAD`. */
  presignPut(input: PresignInput & { contentType: string }): Promise<SignedUrl>
  /** Presigned GET, used by the artifact route. */
  presignGet(input: PresignInput): Promise<SignedUrl>
  /** Public address of an object when a public base URL is configured, else null. */
  publicUrl(key: string): string | null
  /**
   * Present only on the built-in store: answers S3-style to a presigned
   * request under `/storage/<key>` (PUT stores, GET reads back).
   */
  handle?(request: Request, now: Date): Promise<Response>
  /** Multipart uploads (contract, "Upload recovery"); every built-in back end has them. */
  multipart?: MultipartStore
  /** Size, ETag and type of a stored object, or null when absent (the artifact check). */
  head?(key: string): Promise<ObjectHead | null>
}

/** What a HEAD on the store tells about an object. */
export interface ObjectHead {
  /** The object's size in bytes. */
  size: number
  /** Its ETag, as the store reports it. */
  etag: string
  /** Its Content-Type, or null when the store kept none. */
  contentType: string | null
}

/** One part the store holds for an unfinished multipart upload. */
export interface StoredPart {
  /** The part's number, 1 to 10000. */
  partNumber: number
  /** Its size in bytes. */
  size: number
  /** Its ETag, as the store reported it when the part was uploaded. */
  etag: string
}

/** One part as a CompleteMultipartUpload request names it. */
export interface CompletedPart {
  /** The part's number. */
  partNumber: number
  /** The ETag the client got when it uploaded the part. */
  etag: string
}

/**
 * S3's multipart protocol, as the service drives it: it creates, lists,
 * completes and aborts; clients upload the parts themselves through
 * presigned URLs. Failures the caller caused throw `StorageError` with S3's
 * code (`NoSuchUpload`, `InvalidPart`, `InvalidPartOrder`, `EntityTooSmall`).
 */
export interface MultipartStore {
  /**
   * CreateMultipartUpload; the object's Content-Type is fixed here.
   * `partSize` is the size the caller plans for every part but the last: the
   * built-in store lays parts out by it (parts of other sizes still work, by
   * a slower path); S3 has no such field and ignores it.
   */
  create(key: string, contentType: string, partSize?: number): Promise<{ uploadId: string }>
  /** A presigned `PUT` of one part (`partNumber` and `uploadId` signed in the query). */
  presignPart(input: PresignInput & { uploadId: string; partNumber: number }): Promise<SignedUrl>
  /** ListParts: the parts stored so far, ascending. */
  listParts(key: string, uploadId: string): Promise<StoredPart[]>
  /** CompleteMultipartUpload: the object appears whole, with S3's multipart ETag. */
  complete(key: string, uploadId: string, parts: CompletedPart[]): Promise<{ etag: string }>
  /** AbortMultipartUpload: the parts are removed. */
  abort(key: string, uploadId: string): Promise<void>
}

/** An S3 error a store operation reports (S3's code, HTTP status, message). */
export class StorageError extends Error {
  /** Always `'StorageError'`, so the error can be matched by name across bundles. */
  override readonly name = 'StorageError'
  /** Builds the error from S3's `code` (`NoSuchUpload`, ...), its HTTP `status` and a message. */
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** S3's words for `NoSuchUpload`. */
export const NO_SUCH_UPLOAD_MESSAGE = 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.'

/** S3's `NoSuchUpload` (404), worded as S3 words it, for every store that keeps multipart uploads. */
export function noSuchUpload(): StorageError {
  return new StorageError('NoSuchUpload', 404, NO_SUCH_UPLOAD_MESSAGE)
}

/** S3's BadDigest: the body's MD5 is not the request's `Content-MD5`; nothing was stored. */
export function badDigest(): StorageError {
  return new StorageError('BadDigest', 400, 'The Content-MD5 you specified did not match what was received.')
}

/** S3's InvalidPart for a part re-sent while its upload was being completed: the listed ETag is no longer its. */
export function changedPart(partNumber: number): StorageError {
  return new StorageError('InvalidPart', 400, `Part ${partNumber} was sent again while the upload was being completed; its ETag no longer matches.`)
}

/**
 * Where the built-in store keeps bytes. A capability supplied by the adapter
 * (files on disk in Node/Deno/Bun, an R2 binding on Workers), so the core has
 * no filesystem import. `put` must consume the stream without holding it whole
 * in memory and must not leave a partial object behind on failure.
 */
export interface BlobFiles {
  /**
   * Stores the stream under `key` (replacing any object there) and returns
   * its size and ETag. With `md5` (hex, from the request's `Content-MD5`), a
   * body of another digest stores nothing and throws `badDigest()`.
   */
  put(key: string, body: ReadableStream<Uint8Array>, options?: { md5?: string }): Promise<{ size: number; etag: string }>
  /**
   * Reads an object with its size, ETag and (where known) last change, or
   * null when absent. The body is a stream, or for a small object its bytes:
   * a bytes body is sent with its length on every runtime (Bun sends a
   * stream body chunked, without `Content-Length`).
   */
  get(key: string): Promise<{ body: ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer>; size: number; etag: string; lastModified?: Date } | null>
  /**
   * Bytes `start` to `end` (inclusive) of an object, read from `start` on (a
   * seek near the end of a long video reads no more than it sends), or null
   * when absent; without it the store cuts the range out of `get`'s stream.
   * Bytes in memory (a small range) are sent with their length on every
   * runtime (Bun drops Content-Length from a streamed body).
   */
  getRange?(key: string, start: number, end: number): Promise<ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer> | null>
  /** Size and ETag without the bytes, or null when absent. */
  head?(key: string): Promise<{ size: number; etag: string } | null>
  /** Bytes stored under `prefix` (for the per-client quota); absent: no quota can be kept. */
  usage?(prefix: string): Promise<number>
  /** Multipart uploads; absent: the built-in store offers none. */
  multipart?: BlobMultipart
}

/**
 * Multipart storage under the built-in store. The store checks S3's rules
 * (part sizes, order, ETags) before calling `assemble`; this layer only keeps
 * parts and joins them. `assemble` must stream (never hold an object whole)
 * and must make the object appear at once, or not at all.
 */
export interface BlobMultipart {
  /** Starts an upload for `key`, with parts planned at `partSize` bytes (a layout hint); returns its id. */
  create(key: string, partSize?: number): Promise<string>
  /**
   * Stores one part (replacing an earlier one of the same number); throws
   * `StorageError('NoSuchUpload')`. `length` is the request's declared
   * Content-Length, for layers that must know it up front (R2).
   */
  putPart(key: string, uploadId: string, partNumber: number, body: ReadableStream<Uint8Array>, length?: number): Promise<{ size: number; etag: string }>
  /** The parts stored so far, ascending; throws `StorageError('NoSuchUpload')`. */
  listParts(key: string, uploadId: string): Promise<StoredPart[]>
  /**
   * Joins the named parts, in order, into the object `key` with `etag`, and
   * forgets the upload. With `partEtags` (the ETags the completion checked,
   * one per part), a part re-sent since is `StorageError('InvalidPart')`, so
   * the object is always the bytes those ETags name.
   */
  assemble(key: string, uploadId: string, partNumbers: number[], etag: string, partEtags?: readonly string[]): Promise<{ size: number; etag: string }>
  /** Forgets the upload and its parts; throws `StorageError('NoSuchUpload')`. */
  abort(key: string, uploadId: string): Promise<void>
}
