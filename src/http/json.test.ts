import { describe, expect, it } from 'vitest'
import { exactInteger, jsonText, parseJson, sendJson, toInt64 } from './json.ts'

describe('exact JSON integers', () => {
  it('keeps every digit of an int64 a double cannot hold', () => {
    const text = '{"a":9007199254740993,"b":-9223372036854775808,"c":9223372036854775807,"d":[1.5,"x"]}'
    const value = parseJson(text) as Record<string, unknown>
    expect(value.a).toBe(9007199254740993n)
    // -2^63 is a double exactly, but one that prints as -9223372036854776000: kept a bigint.
    expect(value.b).toBe(-9223372036854775808n)
    expect(value.c).toBe(9223372036854775807n)
    expect(value.d).toEqual([1.5, 'x'])
    expect(jsonText({ a: value.a, c: value.c })).toBe('{"a":9007199254740993,"c":9223372036854775807}')
  })

  it('keeps a float written as a long integer a number on the server', () => {
    // JSON.stringify(1e20) writes 100000000000000000000: a double holds it exactly.
    expect(parseJson('{"x":100000000000000000000}')).toEqual({ x: 1e20 })
    // Whatever JSON.stringify writes for a double reads back as that number.
    for (const x of [1.7325600001234568e18, 2 ** 60, -(2 ** 70), 123456789012345680000]) expect(parseJson(JSON.stringify({ x }))).toEqual({ x })
  })

  it('keeps an integer a double holds but prints otherwise a bigint, so it is written back digit for digit', () => {
    for (const text of ['9223372036854775808', '-9223372036854775808', '1732560000123456768', '1152921504606846976']) {
      const value = parseJson(`{"v":${text}}`) as { v: unknown }
      expect(value.v).toBe(BigInt(text))
      expect(jsonText(value)).toBe(`{"v":${text}}`)
    }
  })

  it('reads an integer written with a fraction or an exponent exactly', () => {
    // The same integer three ways; a double would give 9007199254740992 for each.
    for (const text of ['9007199254740993', '9007199254740993.0', '9.007199254740993e15', '900719925474099300e-2']) {
      expect(parseJson(`{"seed":${text}}`)).toEqual({ seed: 9007199254740993n })
    }
    expect(parseJson('{"seed":9.223372036854775807e18}')).toEqual({ seed: 9223372036854775807n })
    expect(parseJson('{"seed":-9.223372036854775808E+18}')).toEqual({ seed: -9223372036854775808n })
    // Integers a double holds and prints alike stay numbers; fractions stay doubles.
    expect(parseJson('{"a":1.23456789012345e18,"b":12.50000000000000000,"c":1e3}')).toEqual({ a: 1.23456789012345e18, b: 12.5, c: 1000 })
  })

  it('finds the exact integer of a number literal, if it is one', () => {
    expect(exactInteger('12')).toBe(12n)
    expect(exactInteger('-1.20e1')).toBe(-12n)
    expect(exactInteger('0.000e5')).toBe(0n)
    expect(exactInteger('1200e-2')).toBe(12n)
    expect(exactInteger('1.5')).toBeUndefined()
    expect(exactInteger('1e-1')).toBeUndefined()
    expect(exactInteger('1e999999999')).toBeUndefined()
    expect(exactInteger('123456789012345678901234567890123456789012345678901')).toBe(123456789012345678901234567890123456789012345678901n)
  })

  it('gives the client a bigint for every integer beyond 2^53', () => {
    expect(parseJson('{"s":-9223372036854775808}', 'unsafe')).toEqual({ s: -9223372036854775808n })
    expect(parseJson('{"s":9007199254740991}', 'unsafe')).toEqual({ s: 9007199254740991 })
  })

  it('reads a literal beyond a double as Infinity on either path, as JSON.parse does', () => {
    for (const mode of ['inexact', 'unsafe'] as const) {
      expect(parseJson('{"x":1e400,"y":-1e999,"seed":9007199254740993}', mode)).toEqual({ x: Infinity, y: -Infinity, seed: 9007199254740993n })
    }
  })

  it('takes JSON.parse for text without 16 digits in a row and fails like it', () => {
    expect(parseJson('{"seed":123456789012345}')).toEqual({ seed: 123456789012345 })
    expect(() => parseJson('{"seed":1234567890123456')).toThrow(SyntaxError)
    expect(() => parseJson('{"a":')).toThrow(SyntaxError)
  })

  it('writes stored int8 values as numbers inside 2^53 and bigints beyond', () => {
    expect(toInt64('42')).toBe(42)
    expect(toInt64('-9223372036854775808')).toBe(-9223372036854775808n)
    expect(toInt64(9223372036854775807n)).toBe(9223372036854775807n)
    expect(toInt64(7n)).toBe(7)
  })

  it('answers with every digit', async () => {
    const response = sendJson({ seed: -9223372036854775808n }, 201)
    expect(response.status).toBe(201)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(await response.text()).toBe('{"seed":-9223372036854775808}')
  })
})
