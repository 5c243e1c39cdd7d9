/**
 * node:crypto behind the `Sha256Ctor` shape the core takes (that of
 * @aws-crypto/sha256-js's `Sha256`, which smithy's SignatureV4 accepts):
 * `new NodeSha256()` hashes, `new NodeSha256(key)` computes an HMAC. The work
 * is synchronous and native; `digest()` returns a promise only because the
 * interface says so.
 *
 * @example
 * const storage = createS3Storage({ ...s3, sha256: NodeSha256 })
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto'

type SourceData = string | ArrayBuffer | ArrayBufferView

function toBytes(data: SourceData): Uint8Array | string {
  if (typeof data === 'string') return data
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  return new Uint8Array(data)
}

/** `Sha256Ctor` over node:crypto: a hash without a secret, an HMAC with one. */
export class NodeSha256 {
  private hash!: Hash | Hmac
  private readonly secret: Uint8Array | string | undefined

  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : toBytes(secret)
    this.reset()
  }

  update(data: SourceData): void {
    this.hash.update(toBytes(data))
  }

  digest(): Promise<Uint8Array> {
    const out = this.hash.digest()
    return Promise.resolve(new Uint8Array(out.buffer, out.byteOffset, out.byteLength))
  }

  reset(): void {
    this.hash = this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret)
  }
}
