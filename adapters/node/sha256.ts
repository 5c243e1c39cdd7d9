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
import * as nodeCrypto from 'node:crypto'
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto'
import type { Sha256OneShot } from '../../src/crypto.ts'

type SourceData = string | ArrayBuffer | ArrayBufferView

function toBytes(data: SourceData): Uint8Array | string {
  if (typeof data === 'string') return data
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  return new Uint8Array(data)
}

type OneShotHash = (algorithm: string, data: string, encoding: 'hex') => string

/**
 * node:crypto's one-shot forms. `crypto.hash` (Node 20.12+, Bun, Deno) skips
 * the Hash object: ~0.8 against ~1.4 µs for a canonical request here; where
 * it is missing (Workers' node:crypto) a Hash object does the same.
 */
export function nodeOneShot(hash: OneShotHash | undefined): Sha256OneShot {
  return {
    hex: typeof hash === 'function' ? (data) => hash('sha256', data, 'hex') : (data) => createHash('sha256').update(data).digest('hex'),
    hmacHex(key) {
      const secret = Buffer.from(key) // a copy: the caller's bytes may change later
      return (data) => createHmac('sha256', secret).update(data).digest('hex')
    },
  }
}

/** `Sha256Ctor` over node:crypto: a hash without a secret, an HMAC with one. */
export class NodeSha256 {
  /** The synchronous one-shot forms the core's presigner and key hashing use when present. */
  // Read off the namespace, so a runtime without `hash` still loads this module.
  static readonly oneShot: Sha256OneShot = nodeOneShot((nodeCrypto as { hash?: OneShotHash }).hash)

  private hash!: Hash | Hmac
  private readonly secret: Uint8Array | string | undefined

  /** Starts a SHA-256 hash, or an HMAC-SHA-256 keyed with `secret` when one is given. */
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.secret = secret === undefined ? undefined : toBytes(secret)
    this.reset()
  }

  /** Feeds more bytes (a string is hashed as UTF-8). */
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBytes(data))
  }

  /** The 32-byte digest of everything fed since the last reset; async to match `Sha256Ctor`. */
  digest(): Promise<Uint8Array> {
    const out = this.hash.digest()
    return Promise.resolve(new Uint8Array(out.buffer, out.byteOffset, out.byteLength))
  }

  /** Starts over with the same secret, so one instance can hash many messages. */
  reset(): void {
    this.hash = this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret)
  }
}
