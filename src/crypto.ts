/**
 * Small crypto helpers over injected capabilities. SHA-256 comes in as a
 * constructor with the shape of @aws-crypto/sha256-js's `Sha256` (and of the
 * Node adapter's node:crypto wrapper), so the same synchronous hash serves the
 * SigV4 signer and API-key hashing; WebCrypto's async digest is kept off hot
 * paths (measured ~7x slower for presigning).
 */
export interface Sha256Hash {
  /** Feeds more input; strings are hashed as their UTF-8 bytes. */
  update(data: Uint8Array | string): void
  /** The 32-byte digest (or HMAC) of everything fed so far. */
  digest(): Promise<Uint8Array>
}

/**
 * One-shot synchronous forms of SHA-256 a hash constructor may carry as its
 * static `oneShot` (the Node adapter's node:crypto one does). Presigning and
 * key hashing use them when present: no hash object, no promise, native hex.
 */
export interface Sha256OneShot {
  /** Lowercase hex SHA-256 of a string's UTF-8 bytes. */
  hex(data: string): string
  /** HMAC-SHA256 under `key`: a function from a string (its UTF-8 bytes) to lowercase hex. */
  hmacHex(key: Uint8Array): (data: string) => string
}

/** `new Sha256()` for a hash, `new Sha256(key)` for an HMAC; optionally `Sha256.oneShot`. */
export type Sha256Ctor = (new (secret?: Uint8Array | string) => Sha256Hash) & { readonly oneShot?: Sha256OneShot }

/** Source of randomness (defaults to WebCrypto's `getRandomValues`). */
export interface Random {
  /** `length` fresh random bytes (secrets, key ids, webhook jitter). */
  bytes(length: number): Uint8Array
  /** A random (version 4) UUID, used for new row ids. */
  uuid(): string
}

/** {@link Random} over WebCrypto (`crypto.getRandomValues`, `crypto.randomUUID`), available in every supported runtime. */
export const webRandom: Random = {
  bytes: (length) => crypto.getRandomValues(new Uint8Array(length)),
  uuid: () => crypto.randomUUID(),
}

/** Lowercase hex SHA-256 of a UTF-8 string (both hashes encode the string themselves, without a copy here). */
export async function sha256Hex(Sha256: Sha256Ctor, text: string): Promise<string> {
  if (Sha256.oneShot) return Sha256.oneShot.hex(text)
  const hash = new Sha256()
  hash.update(text)
  return toHex(await hash.digest())
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** Lowercase hex of `bytes`, two digits per byte. */
export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!]!
  return out
}

/** Compares two strings in time that depends only on their lengths. */
export function timingSafeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length)
  let diff = a.length ^ b.length
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** base64url without padding. */
export function base64url(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]! + BASE64URL[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]!
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]!
  }
  return out
}
