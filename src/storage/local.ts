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
import { s3ErrorResponse } from './s3-error.ts'
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
} from './types.ts'

/** Access key id of every URL the built-in store mints; only the secret is configurable. */
export const LOCAL_ACCESS_KEY_ID = 'episodic-local'

/** Path prefix the app mounts the built-in store on. */
export const LOCAL_STORAGE_PREFIX = '/storage/'

/** Options of `createLocalStorage`. */
export interface LocalStorageOptions {
  files: BlobFiles
  /** Signing secret; keep it stable across restarts so minted URLs stay valid. */
  secret: string
  /** Region in the credential scope; default `auto`, as on R2. */
  region?: string
  /** Synchronous SHA-256 constructor; default @aws-crypto/sha256-js. */
  sha256?: Sha256Ctor
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
  const presigner = createPresigner({
    accessKeyId: LOCAL_ACCESS_KEY_ID,
    secretAccessKey: options.secret,
    region: options.region ?? 'auto',
    sha256: options.sha256,
  })

  async function sign(method: 'GET' | 'PUT', input: PresignInput, contentType?: string): Promise<SignedUrl> {
    if (!isSafeKey(input.key)) throw new EpisodicError('internal', 'local storage: unsafe object key')
    const origin = input.origin.replace(/\/+$/, '')
    const url = await presigner.presign({
      method,
      url: `${origin}${LOCAL_STORAGE_PREFIX}${encodeKeyPath(input.key)}`,
      contentType,
      now: input.now,
      expiresInSeconds: input.expiresInSeconds,
    })
    return { url, expiresAt: expiryOf(input) }
  }

  async function handle(request: Request, now: Date): Promise<Response> {
    if (request.method !== 'GET' && request.method !== 'PUT') {
      const message = 'The specified method is not allowed against this resource.'
      return s3ErrorResponse({ status: 405, code: 'MethodNotAllowed', message }, { allow: 'GET, PUT' })
    }
    const path = new URL(request.url).pathname
    const verdict = await verifyPresigned(request, presigner, now)
    if (!verdict.ok) return refuse(request, s3ErrorResponse(verdict))
    // A valid signature covers the raw path, so this decodes a path we minted.
    // The store may sit under a prefix (the app mounted at `/episodic`): the
    // key is what follows the first `/storage/`.
    const at = path.indexOf(LOCAL_STORAGE_PREFIX)
    const key = at >= 0 ? safeDecode(path.slice(at + LOCAL_STORAGE_PREFIX.length)) : null
    if (key === null || !isSafeKey(key)) return refuse(request, s3ErrorResponse({ status: 400, code: 'InvalidArgument', message: 'Invalid object key.' }))
    return request.method === 'PUT' ? put(key, request) : get(key)
  }

  async function put(key: string, request: Request): Promise<Response> {
    try {
      const { etag } = await files.put(key, request.body ?? new ReadableStream({ start: (c) => c.close() }))
      return new Response(null, { status: 200, headers: { etag: `"${etag}"`, 'content-length': '0' } })
    } catch {
      // Usually the uploader went away mid-body; BlobFiles kept nothing of it.
      return s3ErrorResponse({ status: 500, code: 'InternalError', message: 'The upload did not complete; nothing was stored.' })
    }
  }

  async function get(key: string): Promise<Response> {
    const object = await files.get(key)
    if (!object) return s3ErrorResponse({ status: 404, code: 'NoSuchKey', message: 'The specified key does not exist.' })
    const headers = { 'content-length': String(object.size), etag: `"${object.etag}"`, 'content-type': contentTypeOf(key) }
    return new Response(object.body, { status: 200, headers })
  }

  return {
    presignPut: (input) => sign('PUT', input, input.contentType),
    presignGet: (input) => sign('GET', input),
    publicUrl: () => null,
    handle,
  }
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
  if (request.method !== 'PUT' || !request.body) return response
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
  return response
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
