/**
 * S3-compatible object storage (Cloudflare R2, AWS S3, MinIO): mints
 * SigV4-presigned path-style URLs `${endpoint}/${bucket}/${key}`, which every
 * one of them accepts (virtual-host style would need DNS per bucket on MinIO
 * and buys nothing for presigned URLs). Clients PUT and GET the bytes
 * directly; the service itself calls the bucket only to drive multipart
 * uploads and to HEAD objects for the artifact check (see s3-api.ts).
 */
import type { Sha256Ctor } from '../crypto.ts'
import { EpisodicError } from '../errors.ts'
import { encodeKeyPath, isSafeKey } from './keys.ts'
import { createS3Api } from './s3-api.ts'
import { createPresigner, expiryOf } from './sigv4.ts'
import type { ObjectStorage, PresignInput, SignedUrl } from './types.ts'

/** Options of `createS3Storage` (contract, "Configuration": the `S3_*` variables). */
export interface S3StorageOptions {
  /** Endpoint origin, e.g. `https://<account>.r2.cloudflarestorage.com` or `http://127.0.0.1:9000`. */
  endpoint: string
  /** The bucket's name (`S3_BUCKET`); addressed path-style, `<endpoint>/<bucket>/<key>`. */
  bucket: string
  /** Default `auto` (R2); AWS S3 needs the bucket's region, MinIO usually `us-east-1`. */
  region?: string
  /** The access key id the URLs are signed with (`S3_ACCESS_KEY_ID`). */
  accessKeyId: string
  /** Its secret (`S3_SECRET_ACCESS_KEY`); it never leaves this process. */
  secretAccessKey: string
  /** Base address that fills `public_url` (e.g. an R2 custom domain); default none. */
  publicBaseUrl?: string
  /** Synchronous SHA-256 constructor; default @aws-crypto/sha256-js. */
  sha256?: Sha256Ctor
  /** The fetch the service calls the bucket with (multipart, HEAD); default the global one. */
  fetch?: typeof fetch
  /**
   * How long one call to the bucket may take (default 30 s; completing a
   * multipart upload 10 times as long, as S3 may take minutes). Past it the
   * call fails (a 500 to the API's caller) instead of holding the request.
   */
  timeoutMs?: number
}

/**
 * Creates S3-compatible storage. `origin` in presign inputs is ignored: URLs
 * always point at the bucket.
 *
 * @example
 * const storage = createS3Storage({
 *   endpoint: 'https://acct.r2.cloudflarestorage.com', bucket: 'episodes',
 *   accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY,
 * })
 */
export function createS3Storage(options: S3StorageOptions): ObjectStorage {
  const presigner = createPresigner({
    accessKeyId: options.accessKeyId,
    secretAccessKey: options.secretAccessKey,
    region: options.region ?? 'auto',
    sha256: options.sha256,
  })
  const base = `${options.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(options.bucket)}`
  const publicBase = options.publicBaseUrl ? options.publicBaseUrl.replace(/\/+$/, '') : undefined

  async function sign(method: 'GET' | 'PUT', input: PresignInput, contentType?: string, query = ''): Promise<SignedUrl> {
    if (!isSafeKey(input.key)) throw new EpisodicError('internal', 's3 storage: unsafe object key')
    const url = await presigner.presign({
      method,
      url: `${base}/${encodeKeyPath(input.key)}${query}`,
      contentType,
      now: input.now,
      expiresInSeconds: input.expiresInSeconds,
    })
    return { url, expiresAt: expiryOf(input) }
  }

  const api = createS3Api({ ...options, region: options.region ?? 'auto' })
  return {
    presignPut: (input) => sign('PUT', input, input.contentType),
    presignGet: (input) => sign('GET', input),
    publicUrl: (key) => (publicBase === undefined ? null : `${publicBase}/${encodeKeyPath(key)}`),
    multipart: {
      create: async (key, contentType) => ({ uploadId: await api.createMultipartUpload(key, contentType) }),
      presignPart: (input) => sign('PUT', input, undefined, `?partNumber=${input.partNumber}&uploadId=${encodeURIComponent(input.uploadId)}`),
      listParts: (key, uploadId) => api.listParts(key, uploadId),
      complete: async (key, uploadId, parts) => ({ etag: await api.completeMultipartUpload(key, uploadId, parts) }),
      abort: (key, uploadId) => api.abortMultipartUpload(key, uploadId),
    },
    head: (key) => api.headObject(key),
  }
}
