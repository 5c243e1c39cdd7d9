import { deflateSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { crc32, encodeNpyHeader, readNpz, writeNpz } from './index.ts'
import { writeZip } from './zip-write.ts'

const position = new Float64Array([1, 2, 3, 4, 5, 6])
const archive = (compress = false): Uint8Array => writeNpz({ '/joint_states/position': { shape: [2, 3], data: position } }, { compress })

describe('readNpz on damaged archives', () => {
  it('says when the input is not a zip or the download was cut short', () => {
    expect(() => readNpz(new TextEncoder().encode('<html>503</html>'))).toThrow('npz: corrupt zip: end of central directory not found')
    const bytes = archive()
    expect(() => readNpz(bytes.subarray(0, bytes.length - 10))).toThrow('npz: corrupt zip')
    expect(() => readNpz(bytes.subarray(0, 40))).toThrow('npz: corrupt zip')
  })

  it('names the member whose bytes are damaged', () => {
    const bytes = archive().slice()
    bytes[0] = 0 // break the local header signature
    expect(() => readNpz(bytes)).toThrow('npz entry "/joint_states/position.npy": corrupt zip: bad local header')
  })

  it('detects a flipped data byte when asked to verify CRCs', () => {
    const bytes = archive().slice()
    const at = bytes.length - 200 // inside the element bytes
    bytes[at] ^= 0xff
    expect(() => readNpz(bytes)).not.toThrow()
    expect(() => readNpz(bytes, { verifyCrc: true })).toThrow('npz entry "/joint_states/position.npy": CRC-32 mismatch')
  })

  it('names the member whose deflate stream is corrupt or short', () => {
    const good = archive(true)
    const bad = good.slice()
    bad.fill(0xff, 60, 90)
    expect(() => readNpz(bad)).toThrow(/npz entry "\/joint_states\/position.npy": corrupt deflate data/)
    const header = encodeNpyHeader('<f8', [4])
    const npy = new Uint8Array(header.length + 16)
    npy.set(header)
    const member = { name: 'short.npy', method: 8 as const, parts: [deflateSync(npy)], crc32: crc32(npy), uncompressedSize: npy.length + 16 }
    expect(() => readNpz(writeZip([member]))).toThrow('npz entry "short.npy": corrupt deflate data: inflated to only 144 of the 160 bytes')
    expect(() => readNpz(writeZip([{ ...member, uncompressedSize: npy.length - 16 }]))).toThrow('inflated to more than the 128 bytes')
    expect(() => readNpz(writeZip([{ ...member, uncompressedSize: 2 ** 40 }]))).toThrow('cannot inflate to the declared 1099511627776')
  })

  it('refuses, before inflating anything, an archive whose compressed members declare more than maxInflatedBytes', () => {
    // Three members of 1 MiB of zeros: ~3 kB on the wire (a zip bomb's ratio, at a test's size).
    const zeros = { shape: [1024 * 1024], data: new Uint8Array(1024 * 1024) }
    const bomb = writeNpz({ a: zeros, b: zeros, c: zeros }, { compress: true })
    expect(bomb.byteLength).toBeLessThan(10_000)
    let inflated = 0
    const counting = (_raw: Uint8Array, size: number) => (inflated += size, new Uint8Array(size))
    expect(() => readNpz(bomb, { maxInflatedBytes: 2 * 1024 * 1024, inflate: counting })).toThrow(
      /^npz: its compressed members declare 3146112 bytes of arrays, over the limit of 2097152 \(maxInflatedBytes\)$/,
    )
    expect(inflated).toBe(0)
    expect(Object.keys(readNpz(bomb, { maxInflatedBytes: 4 * 1024 * 1024 }))).toEqual(['a', 'b', 'c'])
    // Stored members are already in memory (the download): they do not count.
    expect(() => readNpz(writeNpz({ a: zeros, b: zeros, c: zeros }), { maxInflatedBytes: 0 })).not.toThrow()
  })

  it('says a member too large for one buffer cannot be held, rather than calling its data corrupt', () => {
    const tooLarge = () => {
      throw new RangeError('The value of "size" is out of range.')
    }
    expect(() => readNpz(archive(true), { inflate: tooLarge })).toThrow(
      /npz entry "\/joint_states\/position.npy": cannot hold its \d+ bytes in one buffer here \(The value of "size" is out of range.\)/,
    )
  })

  it('rejects unsupported compression methods and encrypted members', () => {
    const bytes = archive().slice()
    const v = new DataView(bytes.buffer)
    const cd = bytes.length - 22 - (46 + '/joint_states/position.npy'.length)
    expect(v.getUint32(cd, true)).toBe(0x02014b50)
    v.setUint16(cd + 10, 12, true) // bzip2
    expect(() => readNpz(bytes)).toThrow('npz entry "/joint_states/position.npy": unsupported zip compression method 12')
    v.setUint16(cd + 8, 1, true)
    expect(() => readNpz(bytes)).toThrow('encrypted zip members are not supported')
  })

  it('skips members that are not .npy files', () => {
    const text = new TextEncoder().encode('hello')
    const bytes = writeZip([{ name: 'README.txt', method: 0, parts: [text], crc32: crc32(text), uncompressedSize: 5 }])
    expect(readNpz(bytes)).toEqual({})
  })

  it('reads an archive with a trailing zip comment and leading bytes offset in a larger buffer', () => {
    const bytes = archive()
    const withComment = new Uint8Array(bytes.length + 5 + 3)
    withComment.set(bytes, 3)
    const v = new DataView(withComment.buffer)
    v.setUint16(3 + bytes.length - 2, 5, true) // comment length
    const view = withComment.subarray(3)
    expect(readNpz(view)['/joint_states/position'].data).toEqual(position)
  })
})

describe('crc32', () => {
  it('matches the reference check value and continues across chunks', () => {
    const data = new TextEncoder().encode('123456789')
    expect(crc32(data)).toBe(0xcbf43926)
    expect(crc32(data.subarray(5), crc32(data.subarray(0, 5)))).toBe(0xcbf43926)
    expect(crc32(new Uint8Array(0))).toBe(0)
  })
})
