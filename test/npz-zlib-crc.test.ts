/**
 * readNpz with node:zlib's CRC-32, what the replay harness checks downloads
 * with on Node, Deno and Bun. Kept out of src/replay/npz, which imports no
 * `node:` module, tests included.
 */
import * as zlib from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { crc32, createZlibInflate, encodeNpyHeader, type InflateRawSync, readNpz, writeNpz } from '../src/replay/npz/index.ts'
import { writeZip } from '../src/replay/npz/zip-write.ts'

const position = new Float64Array([1, 2, 3, 4, 5, 6])
const archive = (compress = false): Uint8Array => writeNpz({ '/joint_states/position': { shape: [2, 3], data: position } }, { compress })

describe("readNpz with node:zlib's crc32", () => {
  it("verifies with a CRC function it is given (node:zlib's), once per member, stored or deflated", () => {
    for (const compress of [false, true]) {
      const good = writeNpz({ a: { shape: [3], data: new Float32Array([1, 2, 3]) }, b: { shape: [2], data: new Int16Array([4, 5]) } }, { compress })
      const seen: number[] = []
      const counted = (data: Uint8Array) => (seen.push(data.length), zlib.crc32(data))
      expect(Object.keys(readNpz(good, { verifyCrc: counted }))).toEqual(['a', 'b'])
      expect(seen).toHaveLength(2)
      for (const data of [new Uint8Array(0), new TextEncoder().encode('123456789'), good]) expect(zlib.crc32(data)).toBe(crc32(data))
    }
    const bad = archive().slice()
    bad[bad.length - 200] ^= 0x01
    expect(() => readNpz(bad, { verifyCrc: zlib.crc32 })).toThrow('npz entry "/joint_states/position.npy": CRC-32 mismatch')
    expect(() => readNpz(bad, { verifyCrc: false })).not.toThrow()
  })
})

describe('readNpz with node:zlib inflating a member that lies about its size', () => {
  it('stops one byte past the declared size (memory bounded by the directory) and says the member is corrupt', () => {
    // 32 MiB of zeros in a member whose directory entries declare 1,024 bytes (~32 kB on the wire).
    const npy = new Uint8Array(32 * 1024 * 1024)
    npy.set(encodeNpyHeader('|u1', [npy.length - 128]))
    const member = { name: 'lie.npy', method: 8 as const, parts: [zlib.deflateRawSync(npy)], crc32: crc32(npy), uncompressedSize: 1024 }
    const calls: { maxOutputLength?: number }[] = []
    const spy: InflateRawSync = (data, options) => (calls.push(options), zlib.inflateRawSync(data, options))
    expect(() => readNpz(writeZip([member]), { inflate: createZlibInflate(spy) })).toThrow(
      'npz entry "lie.npy": corrupt deflate data: inflated to more than the 1024 bytes the directory declares',
    )
    expect(calls).toEqual([expect.objectContaining({ maxOutputLength: 1025 })])
  })
})
