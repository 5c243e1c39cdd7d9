/**
 * CRC-32 (the zip / zlib polynomial), slice-by-8 so checking or writing a
 * large archive costs a fraction of inflating it.
 */

/** A CRC-32 of the zip polynomial over bytes, unsigned: this module's `crc32`, or node:zlib's. */
export type Crc32 = (data: Uint8Array) => number

let tables: Int32Array[] | undefined

function makeTables(): Int32Array[] {
  const t: Int32Array[] = []
  for (let k = 0; k < 8; k++) t.push(new Int32Array(256))
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[0][n] = c
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) t[k][n] = t[0][t[k - 1][n] & 0xff] ^ (t[k - 1][n] >>> 8)
  }
  return t
}

/**
 * Continues a CRC-32 over `data`; start with `crc` 0. Returns an unsigned value.
 *
 * @example
 * crc32(new TextEncoder().encode('123456789')) // 0xcbf43926
 */
export function crc32(data: Uint8Array, crc = 0): number {
  tables ??= makeTables()
  const [t0, t1, t2, t3, t4, t5, t6, t7] = tables
  let c = ~crc
  let i = 0
  const n8 = data.length & ~7
  for (; i < n8; i += 8) {
    const a = c ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24))
    c = t7[a & 0xff] ^ t6[(a >>> 8) & 0xff] ^ t5[(a >>> 16) & 0xff] ^ t4[a >>> 24] ^
      t3[data[i + 4]] ^ t2[data[i + 5]] ^ t1[data[i + 6]] ^ t0[data[i + 7]]
  }
  for (; i < data.length; i++) c = t0[(c ^ data[i]) & 0xff] ^ (c >>> 8)
  return ~c >>> 0
}
