import { describe, expect, it } from 'vitest'
import { Sha256 } from '@aws-crypto/sha256-js'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { sha256Hex, toHex } from './crypto.ts'

describe('toHex', () => {
  it('writes every byte value as two lowercase digits', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i)
    const hex = toHex(all)
    expect(hex).toHaveLength(512)
    for (let i = 0; i < 256; i++) expect(hex.slice(2 * i, 2 * i + 2)).toBe(i.toString(16).padStart(2, '0'))
    expect(toHex(new Uint8Array(0))).toBe('')
  })

  it('gives the known SHA-256 of "abc"', async () => {
    expect(await sha256Hex(Sha256, 'abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('hashes the UTF-8 bytes of any string, with either hash', async () => {
    // Keys are ASCII, but sha256Hex takes any string: both hashes must encode it as UTF-8.
    for (const text of ['', 'ü', 'episodic 🤖 Ω', '\u0000x']) {
      const expected = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))))
      expect(await sha256Hex(Sha256, text)).toBe(expected)
      expect(await sha256Hex(NodeSha256, text)).toBe(expected)
    }
  })
})
