import { describe, expect, it } from 'vitest'
import { codePointLength, textProblem, truncateCodePoints } from './text.ts'
import { queryParams } from './query.ts'
import { decodeCursor, encodeCursor } from './cursor.ts'

describe('strings PostgreSQL cannot store', () => {
  it('names U+0000 and unpaired surrogates, accepts pairs', () => {
    expect(textProblem('a\u0000b')).toContain('\\u0000')
    expect(textProblem('\ud800')).toContain('unpaired UTF-16 surrogate')
    expect(textProblem('x\udc00')).toContain('unpaired UTF-16 surrogate')
    expect(textProblem('🤖 ok')).toBeUndefined()
  })

  it('counts code points', () => {
    expect(codePointLength('🤖🤖')).toBe(2)
    expect(codePointLength('abc')).toBe(3)
    expect(codePointLength('\ud800x')).toBe(2)
  })

  it('truncates to code points, never half a surrogate pair', () => {
    expect(truncateCodePoints('a🤖🤖', 2)).toBe('a🤖')
    expect(truncateCodePoints('🤖'.repeat(3000), 2000)).toBe('🤖'.repeat(2000))
    expect(truncateCodePoints('a' + '🤖'.repeat(1500), 2000)).toBe('a' + '🤖'.repeat(1500))
    expect(truncateCodePoints('a' + '🤖'.repeat(2500), 2000)).toBe('a' + '🤖'.repeat(1999))
    expect(truncateCodePoints('abc', 5)).toBe('abc')
    expect(truncateCodePoints('abc', 0)).toBe('')
  })
})

describe('query strings', () => {
  it('decodes strictly and names the parameter', () => {
    expect(queryParams('http://h/x?robot=arm%201&robot=second&policy_version=v+2')).toEqual({ robot: 'arm 1', policy_version: 'v 2' })
    expect(() => queryParams('http://h/x?robot=%00')).toThrow(/robot: must not contain \\u0000/)
    expect(() => queryParams('http://h/x?robot=%ED%A0%80')).toThrow(/robot: must be percent-encoded UTF-8/)
    expect(() => queryParams('http://h/x?robot=%FF')).toThrow(/robot/)
  })
})

describe('cursors', () => {
  const id = '0b3c5a3e-1f0e-4d43-8a57-3b6f5f2e9a10'
  const forge = (text: string) => btoa(text).replace(/=+$/, '')
  it('round-trips and refuses times PostgreSQL cannot take', () => {
    const at = new Date('2026-01-02T03:04:05.678Z')
    expect(decodeCursor(encodeCursor(at, id))).toEqual({ createdAt: at, id })
    expect(() => decodeCursor(forge(`+010000-01-01T00:00:00.000Z|${id}`))).toThrow(/cursor/)
    expect(() => decodeCursor(forge(`0000-01-01T00:00:00.000Z|${id}`))).toThrow(/cursor/)
    expect(() => decodeCursor(encodeCursor(new Date(Date.UTC(10000, 0, 1)), id))).toThrow(/cursor/)
  })

  it('refuses forged cursors that only look well-formed', () => {
    for (const text of [`2026-02-30T00:00:00.000Z|${id}`, `2026-01-01T24:00:00.000Z|${id}`, `2026-01-01T00:00:00.000Z|${id}|x`]) {
      expect(() => decodeCursor(forge(text)), text).toThrow(/cursor: is not a cursor returned by this endpoint/)
    }
    const cursor = encodeCursor(new Date('2026-01-02T03:04:05.678Z'), id)
    expect(decodeCursor(`${cursor}==`).id).toBe(id)
  })
})
