import { describe, expect, it } from 'vitest'
import { postgresAvailable, TEST_DATABASE_URL } from '../../test/helpers/postgres.ts'
import { createPostgresSql } from './postgres-js.ts'
import { parseTextArray, serializeTextArray } from './text-array.ts'

const tricky = ['video', '', 'NULL', 'a,b', 'say "hi"', 'back\\slash', ' spaced ', '{braces}', 'ünïcode ✓', 'new\nline']

describe('text[] literals', () => {
  it('parses what PostgreSQL prints: bare, quoted with escapes, NULL, empty', () => {
    expect(parseTextArray('{}')).toEqual([])
    expect(parseTextArray('{video,sensors}')).toEqual(['video', 'sensors'])
    expect(parseTextArray('{"",NULL,"NULL","a,b","say \\"hi\\"","back\\\\slash"}')).toEqual(['', null, 'NULL', 'a,b', 'say "hi"', 'back\\slash'])
  })

  it('refuses malformed literals instead of guessing', () => {
    expect(() => parseTextArray('video')).toThrow('not a text[] literal')
    expect(() => parseTextArray('{"open}')).toThrow('unterminated quoted element')
    expect(() => parseTextArray('{"a"b}')).toThrow('unexpected "b"')
  })

  it('serializes every element quoted, which parses back to the same array', () => {
    expect(serializeTextArray(['a', null])).toBe('{"a",NULL}')
    expect(parseTextArray(serializeTextArray([...tricky, null]))).toEqual([...tricky, null])
  })
})

// Without fetch_types, postgres.js uses these for text[] in both directions.
describe.skipIf(!postgresAvailable())('text[] through postgres.js without fetch_types', () => {
  it('round-trips parameters and results on the real server', async () => {
    const sql = createPostgresSql(TEST_DATABASE_URL!, { max: 1 })
    try {
      const [row] = await sql.unsafe('select $1::text[] as a, array_length($1::text[], 1) as n, $2::text[] as empty', [[...tricky, null], []], {
        prepare: true,
      })
      expect(row).toEqual({ a: [...tricky, null], n: tricky.length + 1, empty: [] })
      // PostgreSQL's own output for an array built server-side
      const [built] = await sql.unsafe(`select array['x', null, 'a "q"', 'c,d', '']::text[] as a`, [], { prepare: true })
      expect(built).toEqual({ a: ['x', null, 'a "q"', 'c,d', ''] })
    } finally {
      await sql.end()
    }
  })
})
