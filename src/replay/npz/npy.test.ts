import { describe, expect, it } from 'vitest'
import { toFloat16Bits } from './float16.ts'
import { decodeNpy, encodeNpyHeader, parseNpyHeader } from './index.ts'

/** An .npy file from a header and hand-written element bytes. */
function npy(descr: string, shape: number[], payload: number[] | Uint8Array, fortran = false): Uint8Array {
  const header = encodeNpyHeader(descr, shape, fortran)
  const out = new Uint8Array(header.length + payload.length)
  out.set(header)
  out.set(payload, header.length)
  return out
}

/** Big-endian bytes of each value, `size` bytes wide, through a DataView setter. */
function beBytes(values: number[], size: number, set: (v: DataView, at: number, x: number) => void): Uint8Array {
  const out = new Uint8Array(values.length * size)
  const v = new DataView(out.buffer)
  values.forEach((x, i) => set(v, i * size, x))
  return out
}

describe('decodeNpy', () => {
  it('byte-swaps big-endian data into a native array', () => {
    const f8 = decodeNpy(npy('>f8', [3], beBytes([1.5, -2, Math.PI], 8, (v, at, x) => v.setFloat64(at, x))), 'x.npy', 'borrowed')
    expect(f8).toEqual({ dtype: 'float64', shape: [3], data: new Float64Array([1.5, -2, Math.PI]), order: 'C', bigEndian: true })
    const i2 = decodeNpy(npy('>i2', [2], beBytes([-2, 300], 2, (v, at, x) => v.setInt16(at, x))), 'x.npy', 'owned')
    expect(i2.data).toEqual(new Int16Array([-2, 300]))
    const u4 = decodeNpy(npy('>u4', [1], beBytes([0xdeadbeef], 4, (v, at, x) => v.setUint32(at, x))), 'x.npy', 'owned')
    expect(u4.data).toEqual(new Uint32Array([0xdeadbeef]))
    const i8 = decodeNpy(npy('>i8', [1], beBytes([0], 8, (v, at) => v.setBigInt64(at, -5n))), 'x.npy', 'owned')
    expect(i8.data).toEqual(new BigInt64Array([-5n]))
    const f2 = decodeNpy(npy('>f2', [2], beBytes([0x3e00, 0xc000], 2, (v, at, x) => v.setUint16(at, x))), 'x.npy', 'owned')
    expect(f2).toMatchObject({ dtype: 'float16', data: new Float32Array([1.5, -2]) })
  })

  it('transposes Fortran-order 2-d and 3-d arrays into C order', () => {
    // a = [[0, 1, 2], [3, 4, 5]] stored column by column
    const two = decodeNpy(npy('<i2', [2, 3], new Uint8Array(new Int16Array([0, 3, 1, 4, 2, 5]).buffer), true), 'f.npy', 'borrowed')
    expect(two).toEqual({ dtype: 'int16', shape: [2, 3], data: new Int16Array([0, 1, 2, 3, 4, 5]), order: 'F' })
    // b[i, j, k] = 100i + 10j + k, shape (2, 3, 4), Fortran offset i + 2j + 6k
    const shape = [2, 3, 4]
    const f = new Float32Array(24)
    const c = new Float32Array(24)
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 3; j++) {
        for (let k = 0; k < 4; k++) {
          f[i + 2 * j + 6 * k] = 100 * i + 10 * j + k
          c[i * 12 + j * 4 + k] = 100 * i + 10 * j + k
        }
      }
    }
    const three = decodeNpy(npy('<f4', shape, new Uint8Array(f.buffer), true), 'f.npy', 'owned')
    expect(three.data).toEqual(c)
    // Fortran and big endian together
    const be = decodeNpy(npy('>f4', shape, beBytes([...f], 4, (v, at, x) => v.setFloat32(at, x)), true), 'f.npy', 'borrowed')
    expect(be.data).toEqual(c)
  })

  it('views owned aligned bytes without copying and copies borrowed ones', () => {
    const file = npy('<f8', [2], new Uint8Array(new Float64Array([1, 2]).buffer))
    const owned = decodeNpy(file, 'a.npy', 'owned')
    expect(owned.data.buffer).toBe(file.buffer)
    const borrowed = decodeNpy(file, 'a.npy', 'borrowed')
    expect(borrowed.data.buffer).not.toBe(file.buffer)
    expect(borrowed.data).toEqual(new Float64Array([1, 2]))
    // an unaligned owned payload is copied rather than failing
    const shifted = new Uint8Array(file.length + 1)
    shifted.set(file, 1)
    expect(decodeNpy(shifted.subarray(1), 'a.npy', 'owned').data).toEqual(new Float64Array([1, 2]))
  })

  it('shifts a misaligned movable payload back into alignment inside the same buffer', () => {
    const file = npy('<f8', [3], new Uint8Array(new Float64Array([1.5, -2, 3]).buffer))
    for (let skew = 1; skew < 8; skew++) {
      const host = new Uint8Array(file.length + skew + 4).fill(0xee)
      host.set(file, skew)
      const arr = decodeNpy(host.subarray(skew, skew + file.length), 'a.npy', 'movable')
      expect(arr.data.buffer).toBe(host.buffer)
      expect(arr.data.byteOffset % 8).toBe(0)
      expect(arr.data).toEqual(new Float64Array([1.5, -2, 3]))
      // nothing outside the member was touched
      expect([...host.subarray(0, skew)].every((b) => b === 0xee)).toBe(true)
      expect([...host.subarray(skew + file.length)].every((b) => b === 0xee)).toBe(true)
    }
  })

  it('names the entry when the dtype is unsupported', () => {
    expect(() => decodeNpy(npy('<c8', [1], new Uint8Array(8)), '/joint_states/position.npy', 'owned')).toThrow(
      `npz entry "/joint_states/position.npy": unsupported dtype '<c8' (complex arrays are not supported)`,
    )
    for (const descr of ['<U5', '|S3', '<M8[ns]', '|O', '<f16']) {
      expect(() => decodeNpy(npy(descr, [1], new Uint8Array(16)), 'k.npy', 'owned')).toThrow(`npz entry "k.npy": unsupported dtype '${descr}'`)
    }
  })

  it('rejects structured dtypes, bad magic and truncated payloads', () => {
    const dict = "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n"
    const structured = new Uint8Array([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, dict.length, 0, ...new TextEncoder().encode(dict)])
    expect(() => decodeNpy(structured, 's.npy', 'owned')).toThrow('npz entry "s.npy": unsupported structured dtype')
    expect(() => decodeNpy(new Uint8Array(20), 'm.npy', 'owned')).toThrow('npz entry "m.npy": not an .npy file')
    expect(() => decodeNpy(npy('<f8', [4], new Uint8Array(16)), 't.npy', 'owned')).toThrow(
      'npz entry "t.npy": truncated data: shape (4) needs 32 bytes, found 16',
    )
  })
})

describe('npy header', () => {
  it('pads like numpy so data starts on a 64-byte boundary', () => {
    const h = encodeNpyHeader('<f8', [3000, 7])
    expect(h.length % 64).toBe(0)
    expect(new TextDecoder().decode(h.subarray(10))).toBe(`{'descr': '<f8', 'fortran_order': False, 'shape': (3000, 7), }`.padEnd(h.length - 11) + '\n')
    expect(parseNpyHeader(h, 'a.npy')).toEqual({ descr: '<f8', fortranOrder: false, shape: [3000, 7], dataOffset: h.length })
    expect(parseNpyHeader(encodeNpyHeader('|b1', []), 'a.npy').shape).toEqual([])
    expect(parseNpyHeader(encodeNpyHeader('|b1', [5]), 'a.npy').shape).toEqual([5])
  })

  it('reads format versions 2.0 and 3.0', () => {
    for (const major of [2, 3]) {
      const dict = "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 1), }".padEnd(115) + '\n'
      const bytes = new Uint8Array(12 + dict.length)
      bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0, dict.length, 0, 0, 0])
      bytes.set(new TextEncoder().encode(dict), 12)
      expect(parseNpyHeader(bytes, 'v.npy')).toEqual({ descr: '<i4', fortranOrder: true, shape: [2, 1], dataOffset: 128 })
    }
  })
})

describe('float16', () => {
  it('rounds to nearest even and handles the edges', () => {
    expect(toFloat16Bits(1)).toBe(0x3c00)
    expect(toFloat16Bits(-2)).toBe(0xc000)
    expect(toFloat16Bits(65504)).toBe(0x7bff)
    expect(toFloat16Bits(65520)).toBe(0x7c00) // rounds up to infinity
    expect(toFloat16Bits(2 ** -24)).toBe(0x0001)
    expect(toFloat16Bits(2 ** -25)).toBe(0x0000) // tie to even: zero
    expect(toFloat16Bits(1.5 * 2 ** -24)).toBe(0x0002) // tie to even: 2
    expect(toFloat16Bits(1 + 2 ** -11)).toBe(0x3c00) // tie, even mantissa stays
    expect(toFloat16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02) // tie, odd mantissa rounds up
    expect(toFloat16Bits(NaN) & 0x7e00).toBe(0x7e00)
    expect(toFloat16Bits(-0)).toBe(0x8000)
  })
})
