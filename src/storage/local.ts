/**
 * The built-in object store (contract, "Built-in local object store"): the
 * app itself serves `/storage/<key>`, accepts only SigV4 query-presigned
 * requests it minted, and answers like S3. Bytes go to an injected
 * `BlobFiles` (disk in Node/Deno/Bun, anything else elsewhere), streamed in
 * both directions so an upload is never held whole in memory.
 */
import type { Sha256Ctor } from '../crypto.ts'
import { EpisodicError } from '../errors.ts'
import { encodeKeyPath, isSafeKey } from './keys.ts'
import { localMultipart, partTarget } from './local-multipart.ts'
import { MAX_PART_SIZE, MAX_SINGLE_PUT } from './multipart-rules.ts'
import { preconditions } from './conditional.ts'
import { parseRange, rangeNotSatisfiable, sliceStream } from './range.ts'
import { type S3Error, s3ErrorResponse } from './s3-error.ts'
import { createPresigner, expiryOf } from './sigv4.ts'
import { verifyPresigned } from './sigv4-verify.ts'
import {
  ARTIFACT_CONTENT_TYPE,
  ARTIFACT_FILE,
  ARTIFACT_KINDS,
  type BlobFiles,
  type ObjectStorage,
  type PresignInput,
  type SignedUrl,
  StorageError,
} from './types.ts'

/** Access key id of every URL the built-in store mints; only the secret is configurable. */
export const LOCAL_ACCESS_KEY_ID = 'episodic-local'

/** Path prefix the app mounts the built-in store on. */
export const LOCAL_STORAGE_PREFIX = '/storage/'

/** Options of `createLocalStorage`. */
export interface LocalStorageOptions {
  /** Where the bytes live: files on disk (`createDiskFiles`) or an R2 binding (`createR2Files`). */
  files: BlobFiles
  /** Signing secret; keep it stable across restarts so minted URLs stay valid. */
  secret: string
  /** Region in the credential scope; default `auto`, as on R2. */
  region?: string
  /** Synchronous SHA-256 constructor; default @aws-crypto/sha256-js. */
  sha256?: Sha256Ctor
  /**
   * Most bytes one client (the first segment of a key) may keep in the store;
   * default unlimited. Needs `files.usage`. An upload that would pass it gets
   * 403 `QuotaExceeded` before its body is read.
   */
  quotaBytes?: number
  /** Base address that fills `public_url` (`S3_PUBLIC_BASE_URL`: a CDN or web server in front of the objects); default none. */
  publicBaseUrl?: string
}

/**
 * Creates the built-in store. URLs are minted for `input.origin` at
 * `${origin}/storage/${key}`; mount `handle` on `/storage/*` of that origin.
 *
 * @example
 * const storage = createLocalStorage({ files: createDiskFiles('.episodic/objects'), secret })
 * app.all('/storage/*', (c) => storage.handle(c.req.raw, clock.now()))
 */
export function createLocalStorage(options: LocalStorageOptions): ObjectStorage & Required<Pick<ObjectStorage, 'handle'>> {
  const { files } = options
  const publicBase = options.publicBaseUrl ? options.publicBaseUrl.replace(/\/+$/, '') : undefined
  const presigner = createPresigner({
    accessKeyId: LOCAL_ACCESS_KEY_ID,
    secretAccessKey: options.secret,
    region: options.region ?? 'auto',
    sha256: options.sha256,
  })

  async function sign(method: 'GET' | 'PUT', input: PresignInput, contentType?: string, query = ''): Promise<SignedUrl> {
    if (!isSafeKey(input.key)) throw new EpisodicError('internal', 'local storage: unsafe object key')
    const origin = input.origin.replace(/\/+$/, '')
    const url = await presigner.presign({
      method,
      url: `${origin}${LOCAL_STORAGE_PREFIX}${encodeKeyPath(input.key)}${query}`,
      contentType,
      now: input.now,
      expiresInSeconds: input.expiresInSeconds,
    })
    return { url, expiresAt: expiryOf(input) }
  }

  async function handle(request: Request, now: Date): Promise<Response> {
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'PUT') {
      const message = 'The specified method is not allowed against this resource.'
      return s3ErrorResponse({ status: 405, code: 'MethodNotAllowed', message }, { allow: 'GET, HEAD, PUT' })
    }
    const url = new URL(request.url)
    const path = url.pathname
    const part = partTarget(url.searchParams)
    if ('error' in part) return refuse(request, s3ErrorResponse(part.error))
    if (request.method === 'PUT') {
      // Answered at once, without reading (or draining) a body that may be
      // endless or larger than anything worth reading.
      const refused = checkLength(request.headers.get('content-length'), part.uploadId === undefined ? MAX_SINGLE_PUT : MAX_PART_SIZE)
      if (refused) return s3ErrorResponse(refused, { connection: 'close' })
    }
    const verdict = await verifyPresigned(request, presigner, now)
    if (!verdict.ok) return refuse(request, s3ErrorResponse(verdict))
    // A valid signature covers the raw path, so this decodes a path we minted.
    // The store may sit under a prefix (the app mounted at `/episodic`): the
    // key is what follows the first `/storage/`.
    const at = path.indexOf(LOCAL_STORAGE_PREFIX)
    const key = at >= 0 ? safeDecode(path.slice(at + LOCAL_STORAGE_PREFIX.length)) : null
    if (key === null || !isSafeKey(key)) return refuse(request, s3ErrorResponse({ status: 400, code: 'InvalidArgument', message: 'Invalid object key.' }))
    if (request.method !== 'PUT') {
      const response = await get(key, request.headers)
      // HEAD answers as GET does, without the body (S3, for a URL presigned for HEAD).
      return request.method === 'HEAD' ? bodiless(response) : response
    }
    const length = Number(request.headers.get('content-length'))
    const overQuota = await checkQuota(key, length)
    if (overQuota) return refuse(request, s3ErrorResponse(overQuota))
    // Counted against the quota while it arrives, so uploads at once cannot pass it together.
    const release = reserve(key, length)
    try {
      return part.uploadId === undefined ? await put(key, request) : await putPart(key, part.uploadId, part.partNumber, request)
    } finally {
      release()
    }
  }

  async function put(key: string, request: Request): Promise<Response> {
    const declared = request.headers.get('content-md5')
    const md5 = declared === null ? undefined : md5Hex(declared)
    if (md5 === null) return refuse(request, s3ErrorResponse({ status: 400, code: 'InvalidDigest', message: 'The Content-MD5 you specified is not valid.' }))
    try {
      const { etag } = await files.put(key, request.body ?? new ReadableStream({ start: (c) => c.close() }), md5 === undefined ? undefined : { md5 })
      return new Response(null, { status: 200, headers: { etag: `"${etag}"`, 'content-length': '0' } })
    } catch (error) {
      if (error instanceof StorageError && error.code === 'BadDigest') return s3ErrorResponse({ status: 400, code: 'BadDigest', message: error.message })
      // The uploader went away mid-body, or the disk failed or filled up:
      // BlobFiles kept nothing of it either way.
      return closing(s3ErrorResponse({ status: 500, code: 'InternalError', message: 'The upload did not complete; nothing was stored.' }))
    }
  }

  async function putPart(key: string, uploadId: string, partNumber: number, request: Request): Promise<Response> {
    if (!files.multipart) {
      return refuse(request, s3ErrorResponse({ status: 400, code: 'InvalidArgument', message: 'This store does not offer multipart uploads.' }))
    }
    try {
      const { etag } = await files.multipart.putPart(
        key,
        uploadId,
        partNumber,
        request.body ?? new ReadableStream({ start: (c) => c.close() }),
        Number(request.headers.get('content-length')),
      )
      return new Response(null, { status: 200, headers: { etag: `"${etag}"`, 'content-length': '0' } })
    } catch (error) {
      if (error instanceof StorageError && error.code === 'NoSuchUpload') {
        return refuse(request, s3ErrorResponse({ status: 404, code: 'NoSuchUpload', message: error.message }))
      }
      return closing(s3ErrorResponse({ status: 500, code: 'InternalError', message: 'The part did not complete; nothing was stored.' }))
    }
  }

  /** Bytes being uploaded right now, per client folder (this process's uploads; the quota's in-flight share). */
  const inFlight = new Map<string, number>()
  const clientOf = (key: string) => key.slice(0, key.indexOf('/') + 1)
  function reserve(key: string, length: number): () => void {
    if (options.quotaBytes === undefined || !(length > 0)) return () => {}
    const client = clientOf(key)
    inFlight.set(client, (inFlight.get(client) ?? 0) + length)
    return () => {
      const left = (inFlight.get(client) ?? 0) - length
      if (left > 0) inFlight.set(client, left)
      else inFlight.delete(client)
    }
  }

  /**
   * S3's QuotaExceeded when `length` more bytes would take the client past
   * its quota: what its objects hold (less the object at `key`, which these
   * bytes replace), plus what this process is receiving for it. Parts of
   * unfinished multipart uploads count when completed.
   */
  async function checkQuota(key: string, length: number): Promise<S3Error | null> {
    if (options.quotaBytes === undefined || !files.usage) return null
    const client = clientOf(key)
    const replaced = files.head ? ((await files.head(key))?.size ?? 0) : 0
    const used = (await files.usage(client)) - replaced + (inFlight.get(client) ?? 0)
    if (used + length <= options.quotaBytes) return null
    return {
      status: 403,
      code: 'QuotaExceeded',
      message: `This upload of ${length} bytes would take the client past its quota of ${options.quotaBytes} bytes (${used} in use).`,
    }
  }

  async function get(key: string, asked: Headers): Promise<Response> {
    const object = await files.get(key)
    if (!object) return s3ErrorResponse({ status: 404, code: 'NoSuchKey', message: 'The specified key does not exist.' })
    const validators: Record<string, string> = { etag: `"${object.etag}"` }
    if (object.lastModified) validators['last-modified'] = object.lastModified.toUTCString()
    const condition = preconditions(asked, object)
    if (condition !== null) {
      await discard(object.body)
      if (condition === 304) return new Response(null, { status: 304, headers: validators })
      return s3ErrorResponse({ status: 412, code: 'PreconditionFailed', message: 'At least one of the pre-conditions you specified did not hold' })
    }
    const headers = { 'content-length': String(object.size), ...validators, 'content-type': contentTypeOf(key), 'accept-ranges': 'bytes' }
    const range = parseRange(asked.get('range'), object.size)
    if (range === 'unsatisfiable') {
      await discard(object.body)
      return rangeNotSatisfiable(object.size)
    }
    if (range) {
      const length = String(range.end - range.start + 1)
      const partial = { ...headers, 'content-length': length, 'content-range': `bytes ${range.start}-${range.end}/${object.size}` }
      if (object.body instanceof Uint8Array) return new Response(object.body.subarray(range.start, range.end + 1), { status: 206, headers: partial })
      if (!files.getRange) return new Response(sliceStream(object.body, range.start, range.end), { status: 206, headers: partial })
      // Read from the range's start rather than through everything before it.
      await object.body.cancel()
      const body = await files.getRange(key, range.start, range.end)
      if (!body) return s3ErrorResponse({ status: 404, code: 'NoSuchKey', message: 'The specified key does not exist.' })
      return new Response(body, { status: 206, headers: partial })
    }
    return new Response(object.body, { status: 200, headers })
  }

  return {
    presignPut: (input) => sign('PUT', input, input.contentType),
    presignGet: (input) => sign('GET', input),
    publicUrl: (key) => (publicBase === undefined ? null : `${publicBase}/${encodeKeyPath(key)}`),
    handle,
    ...(files.multipart ? { multipart: localMultipart(files.multipart, sign, checkQuota) } : {}),
    ...(files.head ? { head: headOf(files) } : {}),
  }
}

/** HEAD for the artifact check: the store keeps no types, so the file name gives it. */
function headOf(files: BlobFiles): NonNullable<ObjectStorage['head']> {
  return async (key) => {
    if (!isSafeKey(key)) return null
    const found = await files.head!(key)
    return found && { size: found.size, etag: found.etag, contentType: contentTypeOf(key) }
  }
}

/**
 * S3's length rules for a PUT, checked before the body is read: a length
 * must be declared (411 `MissingContentLength`, as S3 and R2 answer a
 * chunked upload) and may not pass `max` (400 `EntityTooLarge`).
 */
function checkLength(declared: string | null, max: number): S3Error | null {
  if (declared === null) return { status: 411, code: 'MissingContentLength', message: 'You must provide the Content-Length HTTP header.' }
  const length = /^\d{1,16}$/.test(declared.trim()) ? Number(declared) : NaN
  if (!Number.isSafeInteger(length)) return { status: 400, code: 'InvalidArgument', message: 'The Content-Length header is not a valid length.' }
  if (length > max) {
    return { status: 400, code: 'EntityTooLarge', message: `Your proposed upload of ${length} bytes exceeds the maximum allowed size of ${max} bytes.` }
  }
  return null
}

/** A `Content-MD5` header (base64 of the 16 digest bytes) as hex, or null when it is not one. */
function md5Hex(header: string): string | null {
  const text = header.trim()
  if (!/^[A-Za-z0-9+/]{22}==$/.test(text)) return null
  return Array.from(atob(text), (c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('')
}

/** Most of a refused upload's body that is read (and discarded) before answering. */
const REFUSED_BODY_DRAIN = 16 * 1024 * 1024

/**
 * Answers a refused request. A refused PUT's body is read and discarded (up
 * to 16 MiB) first: some servers (workerd) reset a connection whose request
 * body was never read, and the uploader would see a network error instead of
 * the 403 that says what is wrong. Larger bodies are cut off, so nobody can
 * make the store read an unbounded body without a valid signature.
 */
async function refuse(request: Request, response: Response): Promise<Response> {
  // A body already being read (a part refused mid-write, its upload aborted) is not drained here.
  if (request.method !== 'PUT' || !request.body) return response
  if (request.body.locked) return closing(response)
  const reader = request.body.getReader()
  let read = 0
  try {
    while (read <= REFUSED_BODY_DRAIN) {
      const { done, value } = await reader.read()
      if (done) return response
      read += value.byteLength
    }
    await reader.cancel()
  } catch {
    // The uploader went away; the answer no longer matters.
  }
  return closing(response)
}

/**
 * `response`, asking the client not to send another request on this
 * connection: the request's body was not read to its end, so the server
 * closes it after answering (a client that reused it saw "other side closed").
 */
function closing(response: Response): Response {
  response.headers.set('connection', 'close')
  return response
}

/** A HEAD's answer: the status and headers of the GET's, without its body. */
function bodiless(response: Response): Response {
  void response.body?.cancel()
  return new Response(null, { status: response.status, headers: response.headers })
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text)
  } catch {
    return null
  }
}

/** The store keeps no metadata, so GET derives the type from the artifact file name. */
function contentTypeOf(key: string): string {
  const kind = ARTIFACT_KINDS.find((k) => key.endsWith(`/${ARTIFACT_FILE[k]}`))
  return kind ? ARTIFACT_CONTENT_TYPE[kind] : 'application/octet-stream'
}

/** Releases a body that will not be sent (a stream holds a file open until cancelled). */
async function discard(body: ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer>): Promise<void> {
  if (!(body instanceof Uint8Array)) await body.cancel()
}
