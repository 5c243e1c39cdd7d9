/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): secrets are
 * `whsec_<base64 of random bytes>`, and each attempt carries `webhook-id`,
 * `webhook-timestamp` (seconds) and `webhook-signature: v1,<base64 of
 * HMAC-SHA256("<id>.<timestamp>.<body>")>` keyed with the decoded bytes. Uses
 * WebCrypto only, so it runs on every runtime, Workers included.
 *
 * @example
 * const secret = newSigningSecret(webRandom)
 * const headers = await signedHeaders(secret, 'msg_abc', new Date(), body)
 */
import type { Random } from '../crypto.ts'

export const SECRET_PREFIX = 'whsec_'

/** Bytes of a new signing key: 32, the HMAC-SHA256 block-size sweet spot (the spec asks 24..64). */
const SECRET_BYTES = 32

/** Standard base64 (with padding) of bytes. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!)
  return btoa(binary)
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** A fresh `whsec_...` secret from the random source. */
export function newSigningSecret(random: Random): string {
  return SECRET_PREFIX + toBase64(random.bytes(SECRET_BYTES))
}

/** The HMAC key a `whsec_...` secret stands for (the bytes after the prefix). */
export function signingKey(secret: string): Uint8Array {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_')
  return fromBase64(secret.slice(SECRET_PREFIX.length))
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. */
export async function signature(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', signingKey(secret) as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`))
  return `v1,${toBase64(new Uint8Array(mac))}`
}

/** The three Standard Webhooks headers of one attempt, signed at `at`. */
export async function signedHeaders(secret: string, id: string, at: Date, body: string): Promise<Record<string, string>> {
  const timestamp = Math.floor(at.getTime() / 1000)
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': await signature(secret, id, timestamp, body),
  }
}
