/**
 * S3-compatible object storage (Cloudflare R2, AWS S3, MinIO): mints
 * SigV4-presigned path-style URLs `${endpoint}/${bucket}/${key}`, which every
 * one of them accepts (virtual-host style would need DNS per bucket on MinIO
 * and buys nothing for presigned URLs). The service never talks to the
 * bucket itself: clients PUT and GET the bytes directly.
 */
import type { Sha256Ctor } from '../crypto.ts'
import { EpisodicError } from '../errors.ts'
import { encodeKeyPath, isSafeKey } from './keys.ts'
import { createPresigner, expiryOf } from './sigv4.ts'
import type { ObjectStorage, PresignInput, SignedUrl } from './types.ts'

/** Options of `createS3Storage` (contract, "Configuration": the `S3_*` variables). */
export interface S3StorageOptions {
  /** Endpoint origin, e.g. `https://<account>.r2.cloudflarestorage.com` or `http://127.0.0.1:9000`. */
  endpoint: string
  bucket: string
  /** Default `auto` (R2); AWS S3 needs the bucket's region, MinIO usually `us-east-1`. */
  region?: string
  accessKeyId: string
  secretAccessKey: string
  /** Base address that fills `public_url` (e.g. an R2 custom domain); default none. */
  publicBaseUrl?: string
  /** Synchronous SHA-256 constructor; default @aws-crypto/sha256-js. */
  sha256?: Sha256Ctor
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

  async function sign(method: 'GET' | 'PUT', input: PresignInput, contentType?: string): Promise<SignedUrl> {
    if (!isSafeKey(input.key)) throw new EpisodicError('internal', 's3 storage: unsafe object key')
    const url = await presigner.presign({
      method,
      url: `${base}/${encodeKeyPath(input.key)}`,
      contentType,
      now: input.now,
      expiresInSeconds: input.expiresInSeconds,
    })
    return { url, expiresAt: expiryOf(input) }
  }

  return {
    presignPut: (input) => sign('PUT', input, input.contentType),
    presignGet: (input) => sign('GET', input),
    publicUrl: (key) => (publicBase === undefined ? null : `${publicBase}/${encodeKeyPath(key)}`),
  }
}
