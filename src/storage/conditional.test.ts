import { describe, expect, it } from 'vitest'
import { preconditions } from './conditional.ts'

const lastModified = new Date('2030-01-01T12:00:00.750Z')
const object = { etag: 'abc', lastModified }
const at = (headers: Record<string, string>, o: { etag: string; lastModified?: Date } = object) => preconditions(new Headers(headers), o)

describe('preconditions (RFC 9110 13.2.2, as S3 answers them)', () => {
  it('sends the object when no condition is asked', () => {
    expect(at({})).toBeNull()
  })

  it('If-Match: strong comparison over a list or *; a miss is 412', () => {
    expect(at({ 'if-match': '"abc"' })).toBeNull()
    expect(at({ 'if-match': '"x", "abc"' })).toBeNull()
    expect(at({ 'if-match': '*' })).toBeNull()
    expect(at({ 'if-match': '"x"' })).toBe(412)
    expect(at({ 'if-match': 'W/"abc"' })).toBe(412)
    expect(at({ 'if-match': 'abc' })).toBe(412) // not an entity tag
  })

  it('If-None-Match: weak comparison over a list or *; a match is 304', () => {
    expect(at({ 'if-none-match': '"abc"' })).toBe(304)
    expect(at({ 'if-none-match': 'W/"abc"' })).toBe(304)
    expect(at({ 'if-none-match': '"x", "abc"' })).toBe(304)
    expect(at({ 'if-none-match': '*' })).toBe(304)
    expect(at({ 'if-none-match': '"x"' })).toBeNull()
  })

  it('dates count in whole seconds: If-Modified-Since at or after the change is 304, If-Unmodified-Since before it is 412', () => {
    expect(at({ 'if-modified-since': lastModified.toUTCString() })).toBe(304)
    expect(at({ 'if-modified-since': 'Wed, 01 Jan 2030 11:59:59 GMT' })).toBeNull()
    expect(at({ 'if-unmodified-since': lastModified.toUTCString() })).toBeNull()
    expect(at({ 'if-unmodified-since': 'Tue, 01 Jan 2030 11:59:59 GMT' })).toBe(412)
  })

  it('a date condition is ignored beside its ETag counterpart, when it is no date, or when the change time is unknown', () => {
    // S3: If-Match true and If-Unmodified-Since false -> 200; If-None-Match false and If-Modified-Since true -> 200 too.
    expect(at({ 'if-match': '"abc"', 'if-unmodified-since': 'Tue, 01 Jan 2030 11:59:59 GMT' })).toBeNull()
    expect(at({ 'if-none-match': '"x"', 'if-modified-since': lastModified.toUTCString() })).toBeNull()
    expect(at({ 'if-modified-since': 'yesterday' })).toBeNull()
    expect(at({ 'if-unmodified-since': 'Tue, 01 Jan 2030 11:59:59 GMT' }, { etag: 'abc' })).toBeNull()
  })

  it('412 comes before 304', () => {
    expect(at({ 'if-match': '"x"', 'if-none-match': '"abc"' })).toBe(412)
  })
})
