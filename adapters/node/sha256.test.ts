import { hash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { toHex } from '../../src/crypto.ts'
import { nodeOneShot, NodeSha256 } from './sha256.ts'

const texts = ['', 'abc', 'ü', 'episodic 🤖 Ω', '\u0000x', 'x'.repeat(1000)]

async function webSha256(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))))
}

async function webHmac(key: Uint8Array<ArrayBuffer>, text: string): Promise<string> {
  const imported = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return toHex(new Uint8Array(await crypto.subtle.sign('HMAC', imported, new TextEncoder().encode(text))))
}

describe('NodeSha256.oneShot', () => {
  // With crypto.hash (Node 20.12+) and without it (Workers' node:crypto), as nodeOneShot picks.
  const forms = [['crypto.hash', NodeSha256.oneShot], ['Hash objects', nodeOneShot(undefined)]] as const
  expect(typeof hash).toBe('function')

  it.each(forms)('hashes the UTF-8 bytes of any string as WebCrypto does (%s)', async (_, oneShot) => {
    for (const text of texts) expect(oneShot.hex(text)).toBe(await webSha256(text))
  })

  it.each(forms)('computes HMAC-SHA256 as WebCrypto does, with keys of any length (%s)', async (_, oneShot) => {
    for (const length of [1, 32, 64, 65, 200]) {
      const key = Uint8Array.from({ length }, (_, i) => (i * 37 + length) & 0xff)
      const sign = oneShot.hmacHex(key)
      for (const text of texts) expect(sign(text)).toBe(await webHmac(key, text))
    }
  })

  it('keeps its own copy of the key', async () => {
    const key = new Uint8Array(32).fill(7)
    const sign = NodeSha256.oneShot.hmacHex(key)
    const before = sign('string to sign')
    key.fill(8)
    expect(sign('string to sign')).toBe(before)
    expect(before).toBe(await webHmac(new Uint8Array(32).fill(7), 'string to sign'))
  })
})
