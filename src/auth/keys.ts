/**
 * API key format (contract, "API keys"): `epk_<key_id>_<secret>` where key_id
 * is 12 lowercase base32 characters and secret is 32 random bytes in base64url
 * without padding (43 characters, which may themselves contain `_`). Only the
 * key id and the SHA-256 of the secret are ever stored.
 */
import { base64url, type Random } from '../crypto.ts'

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'
const KEY_PATTERN = /^epk_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/

export interface ParsedKey {
  keyId: string
  secret: string
}

/** Splits a presented key, or returns null when it is not of the form above. */
export function parseApiKey(key: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(key)
  return match ? { keyId: match[1]!, secret: match[2]! } : null
}

/** Mints a new key; the caller stores `keyId` and the hash of `secret`. */
export function mintApiKey(random: Random): ParsedKey & { key: string } {
  const idBytes = random.bytes(12)
  let keyId = ''
  for (const b of idBytes) keyId += BASE32[b & 31]
  const secret = base64url(random.bytes(32))
  return { keyId, secret, key: `epk_${keyId}_${secret}` }
}
