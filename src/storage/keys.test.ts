import { describe, expect, it } from 'vitest'
import { encodeKeyPath, escapeUri, isSafeKey } from './keys.ts'

/** The escaping without the unreserved fast path, as the reference. */
const reference = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

describe('escapeUri', () => {
  it('leaves unreserved characters alone and escapes everything else as SigV4 does', () => {
    expect(escapeUri('c1b2-9f._~Az')).toBe('c1b2-9f._~Az')
    expect(escapeUri("it's (a) *test*!")).toBe('it%27s%20%28a%29%20%2Atest%2A%21')
    expect(escapeUri('a/b+c=d&é')).toBe('a%2Fb%2Bc%3Dd%26%C3%A9')
    expect(escapeUri('')).toBe('')
  })

  it("agrees with plain encodeURIComponent + !'()* on every printable ASCII character and beyond", () => {
    for (let code = 0x20; code < 0x250; code++) {
      const text = `x${String.fromCharCode(code)}y`
      expect(escapeUri(text)).toBe(reference(text))
    }
  })
})

describe('encodeKeyPath', () => {
  it('keeps slashes and escapes each segment', () => {
    const key = 'c1/0c8f5a1e-2b7d-4f1e-9d3a-5b6c7d8e9f00/sensors.npz'
    expect(encodeKeyPath(key)).toBe(key)
    expect(encodeKeyPath('c1/ep 1/video.mp4')).toBe('c1/ep%201/video.mp4')
    expect(encodeKeyPath('a/b?c/d#e')).toBe('a/b%3Fc/d%23e')
  })
})

describe('isSafeKey', () => {
  it('accepts service keys and refuses traversal, empty segments and control characters', () => {
    expect(isSafeKey('c1/e1/video.mp4')).toBe(true)
    for (const key of ['', '../x', 'a/../b', 'a//b', './a', 'a\\b', 'a\u0000b', 'x'.repeat(1025)]) expect(isSafeKey(key)).toBe(false)
  })

  it('agrees with the plain rule (split on /, no empty, . or .. segment, no \\ or control character) on random keys', () => {
    const plain = (key: string) =>
      // deno-lint-ignore no-control-regex -- control characters are exactly what the rule refuses
      key.length > 0 && key.length <= 1024 && !/[\\\u0000-\u001f\u007f]/.test(key) && key.split('/').every((s) => s !== '' && s !== '.' && s !== '..')
    const alphabet = ['a', 'Z', '0', '.', '.', '/', '/', '-', '_', ' ', '\\', '\u0000', '\u001f', '\u007f', '\u0080', 'é', '🤖']
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    let safe = 0
    for (let n = 0; n < 20_000; n++) {
      const key = Array.from({ length: Math.floor(next() * 9) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('')
      expect(isSafeKey(key), JSON.stringify(key)).toBe(plain(key))
      if (plain(key)) safe++
    }
    expect(safe).toBeGreaterThan(1_000) // both outcomes were exercised
    for (const key of ['.', '..', '...', 'a/.', 'a/..', 'a/...', '.a/..b', '/', 'a/', '/a', 'x'.repeat(1024)]) expect(isSafeKey(key), key).toBe(plain(key))
  })
})
