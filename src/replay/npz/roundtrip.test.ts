import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type DType, type NdArray, readNpz, type TypedArray, writeNpz } from './index.ts'

const SAMPLES: Record<DType, TypedArray> = {
  bool: new Uint8Array([1, 0, 1, 1, 0, 0]),
  int8: new Int8Array([-128, -1, 0, 1, 127, 5]),
  int16: new Int16Array([-32768, -1, 0, 1, 32767, 300]),
  int32: new Int32Array([-(2 ** 31), -1, 0, 1, 2 ** 31 - 1, 70000]),
  int64: new BigInt64Array([-(2n ** 63n), -1n, 0n, 1n, 2n ** 63n - 1n, 2n ** 53n + 1n]),
  uint8: new Uint8Array([0, 1, 2, 128, 255, 7]),
  uint16: new Uint16Array([0, 1, 2, 32768, 65535, 7]),
  uint32: new Uint32Array([0, 1, 2, 2 ** 31, 2 ** 32 - 1, 7]),
  uint64: new BigUint64Array([0n, 1n, 2n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 53n + 1n]),
  float16: new Float32Array([0, -0, 1.5, 65504, 2 ** -24, -Infinity]),
  float32: new Float32Array([0, -0, 1.5, 3.4028234663852886e38, 1e-45, NaN]),
  float64: new Float64Array([0, -0, Math.PI, Number.MAX_VALUE, 5e-324, NaN]),
}

describe('writeNpz -> readNpz', () => {
  for (const compress of [false, true]) {
    for (const [dtype, data] of Object.entries(SAMPLES) as [DType, TypedArray][]) {
      it(`${dtype} ${compress ? 'deflated' : 'stored'} keeps dtype, shape and values`, () => {
        const back = readNpz(writeNpz({ '/a/b': { dtype, shape: [2, 3], data } }, { compress }), { verifyCrc: true })
        expect(Object.keys(back)).toEqual(['/a/b'])
        expect(back['/a/b']).toEqual({ dtype, shape: [2, 3], data, order: 'C' })
      })
    }
  }

  it('0-d, empty and 1-d arrays, and keys in insertion order', () => {
    const back = readNpz(writeNpz({
      scalar: { shape: [], data: new Float64Array([2.5]) },
      empty: { dtype: 'int32', shape: [0, 7], data: [] },
      plain: [1, 2, 3],
      flags: { data: [true, false] },
      big: { data: [1n, -2n] },
    }))
    expect(Object.keys(back)).toEqual(['scalar', 'empty', 'plain', 'flags', 'big'])
    expect(back.scalar).toEqual({ dtype: 'float64', shape: [], data: new Float64Array([2.5]), order: 'C' })
    expect(back.empty).toMatchObject({ dtype: 'int32', shape: [0, 7], data: new Int32Array(0) })
    expect(back.plain).toMatchObject({ dtype: 'float64', shape: [3], data: new Float64Array([1, 2, 3]) })
    expect(back.flags).toMatchObject({ dtype: 'bool', data: new Uint8Array([1, 0]) })
    expect(back.big).toMatchObject({ dtype: 'int64', data: new BigInt64Array([1n, -2n]) })
  })

  it('a key named __proto__ stays an ordinary key', () => {
    const back = readNpz(writeNpz(JSON.parse('{"__proto__": [1, 2]}')))
    expect(Object.keys(back)).toEqual(['__proto__'])
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
  })

  it('forced zip64 archives read back the same', () => {
    const arrays = { '/joint_states/position': new Float64Array([1, 2, 3]), u: new Uint16Array([9]) }
    for (const compress of [false, true]) {
      const bytes = writeNpz(arrays, { zip64: true, compress })
      expect(findSig(bytes, 0x06064b50)).toBeGreaterThan(0) // zip64 end of central directory
      const back = readNpz(bytes, { verifyCrc: true })
      expect(back['/joint_states/position'].data).toEqual(arrays['/joint_states/position'])
      expect(back.u.data).toEqual(arrays.u)
    }
  })

  it('keys option decodes only the named arrays', () => {
    const back = readNpz(writeNpz({ a: [1], b: [2], c: [3] }), { keys: ['b'] })
    expect(Object.keys(back)).toEqual(['b'])
  })

  it('writes identical bytes for identical input', () => {
    const a = { x: new Float32Array([1, 2]) }
    expect(writeNpz(a, { compress: true })).toEqual(writeNpz(a, { compress: true }))
  })

  it('rejects a shape that does not fit the data', () => {
    expect(() => writeNpz({ x: { shape: [2, 2], data: [1, 2, 3] } })).toThrow('key "x": shape [2, 2] does not fit 3 elements')
  })

  it('round-trips random arrays of every dtype (property)', () => {
    const dtypes = Object.keys(SAMPLES) as DType[]
    const arb = fc.record({
      dtype: fc.constantFrom(...dtypes),
      shape: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 4 }),
      seed: fc.integer(),
      compress: fc.boolean(),
      zip64: fc.boolean(),
    })
    fc.assert(
      fc.property(arb, ({ dtype, shape, seed, compress, zip64 }) => {
        const arr = randomArray(dtype, shape, seed)
        const back = readNpz(writeNpz({ k: arr }, { compress, zip64 }), { verifyCrc: true })
        expect(back.k).toEqual(arr)
      }),
      { numRuns: 300 },
    )
  })
})

function findSig(bytes: Uint8Array, sig: number): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let p = bytes.length - 4; p >= 0; p--) if (v.getUint32(p, true) === sig) return p
  return -1
}

/** Deterministic pseudo-random array whose values survive the dtype exactly. */
function randomArray(dtype: DType, shape: number[], seed: number): NdArray {
  const n = shape.reduce((a, b) => a * b, 1)
  const sample = SAMPLES[dtype]
  const data = new (sample.constructor as { new (n: number): TypedArray })(n)
  let x = seed >>> 0 || 1
  for (let i = 0; i < n; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    data[i] = sample[(x >>> 0) % sample.length]
  }
  return { dtype, shape, data, order: 'C' }
}
