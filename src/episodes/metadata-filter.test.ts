import { describe, expect, it } from 'vitest'
import { metadataParamsFromText, parseMetadataFilter, splitMetadataParams } from './metadata-filter.ts'

describe('metadata filters', () => {
  it('match a plain value as a string, also inside an array', () => {
    expect(parseMetadataFilter('metadata.task', 'reach').documents).toEqual(['{"task":"reach"}', '{"task":["reach"]}'])
  })

  it('match a JSON scalar both as itself and as its text, keeping every digit', () => {
    expect(parseMetadataFilter('metadata.seed', '5').documents).toEqual(['{"seed":"5"}', '{"seed":5}', '{"seed":["5"]}', '{"seed":[5]}'])
    expect(parseMetadataFilter('metadata.ok', 'true').documents).toContain('{"ok":true}')
    expect(parseMetadataFilter('metadata.big', '12345678901234567890123').documents).toContain('{"big":12345678901234567890123}')
    // not JSON numbers: strings only
    expect(parseMetadataFilter('metadata.v', '05').documents).toEqual(['{"v":"05"}', '{"v":["05"]}'])
    expect(parseMetadataFilter('metadata.v', 'NaN').documents).toEqual(['{"v":"NaN"}', '{"v":["NaN"]}'])
  })

  it('search a number PostgreSQL cannot read as its text only (casting it would fail the query)', () => {
    for (const huge of ['1e999999', '1e-999999', '1e131072', '1e-16384', '0e-999999', '-9.5e131072']) {
      expect(parseMetadataFilter('metadata.seed', huge).documents, huge).toEqual([`{"seed":"${huge}"}`, `{"seed":["${huge}"]}`])
    }
    for (const edge of ['1e131071', '1e-16383', '0e999999', '0.0001e131075']) {
      expect(parseMetadataFilter('metadata.seed', edge).documents, edge).toContain(`{"seed":${edge}}`)
    }
  })

  it('take a double-quoted value as exactly that string', () => {
    expect(parseMetadataFilter('metadata.seed', '"5"').documents).toEqual(['{"seed":"5"}', '{"seed":["5"]}'])
    expect(() => parseMetadataFilter('metadata.seed', '"a"b"')).toThrow('metadata.seed: a quoted value must be a JSON string')
  })

  it('nest dotted paths and escape keys', () => {
    expect(parseMetadataFilter('metadata.arm.side', 'left').documents[0]).toBe('{"arm":{"side":"left"}}')
    expect(parseMetadataFilter('metadata.a"b', 'x').documents[0]).toBe('{"a\\"b":"x"}')
  })

  it('refuse empty path segments, NUL and unpaired surrogates, naming the parameter', () => {
    expect(() => parseMetadataFilter('metadata.', 'x')).toThrow('metadata.: is not a metadata key path')
    expect(() => parseMetadataFilter('metadata.a..b', 'x')).toThrow('metadata.a..b:')
    expect(() => parseMetadataFilter('metadata.a', 'x\u0000')).toThrow('metadata.a: must not contain \\u0000')
    expect(() => parseMetadataFilter('metadata.a', 'x\uD800')).toThrow('metadata.a: must not contain an unpaired UTF-16 surrogate')
    // The same spelled as JSON escapes inside a quoted value.
    expect(() => parseMetadataFilter('metadata.a', '"\\u0000"')).toThrow('metadata.a: must not contain \\u0000')
    expect(() => parseMetadataFilter('metadata.a', '"x\\ud800"')).toThrow('metadata.a: must not contain an unpaired UTF-16 surrogate')
    expect(() => parseMetadataFilter('metadata.a', 'é'.repeat(1001))).toThrow('at most 1000 characters')
    expect(parseMetadataFilter('metadata.a', '😀').documents[0]).toBe('{"a":"😀"}')
  })

  it('split a query into filters and the other parameters', () => {
    const { filters, rest } = splitMetadataParams({ 'metadata.task': 'reach', limit: '5', 'metadata.site': 'lab-2' })
    expect(filters.map((f) => f.param)).toEqual(['metadata.task', 'metadata.site'])
    expect(rest).toEqual({ limit: '5' })
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`metadata.k${i}`, 'v']))
    expect(() => splitMetadataParams(many)).toThrow('at most 16 metadata filters')
  })

  it('read the portal text form', () => {
    expect(metadataParamsFromText(' task=reach  site=lab-2 note="two words" seed="5"')).toEqual({
      'metadata.task': 'reach',
      'metadata.site': 'lab-2',
      'metadata.note': '"two words"',
      'metadata.seed': '"5"',
    })
    expect(metadataParamsFromText('')).toEqual({})
    expect(() => metadataParamsFromText('task')).toThrow('metadata: "task" is not key=value')
  })
})
