/**
 * IEEE 754 half precision, the one numpy dtype JavaScript cannot hold natively
 * in every runtime. The reader widens `float16` to `Float32Array` (exact: every
 * half is a float32; NaN payloads are not kept), and the writer narrows with
 * round-to-nearest-even.
 */

let table: Float32Array | undefined

/** Float32 value of each of the 65,536 half bit patterns, built on first use (256 KB). */
function halfTable(): Float32Array {
  if (table) return table
  table = new Float32Array(65536)
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1
    const exp = (h >> 10) & 0x1f
    const mant = h & 0x3ff
    table[h] = exp === 0 ? sign * mant * 2 ** -24 : exp === 31 ? (mant ? NaN : sign * Infinity) : sign * (1 + mant / 1024) * 2 ** (exp - 15)
  }
  return table
}

/**
 * Decodes `count` halves from raw file bytes into a new `Float32Array`,
 * reading little or big endian as the file says.
 */
export function decodeFloat16(bytes: Uint8Array, count: number, bigEndian: boolean): Float32Array {
  const lut = halfTable()
  const out = new Float32Array(count)
  const lo = bigEndian ? 1 : 0
  const hi = 1 - lo
  for (let i = 0, p = 0; i < count; i++, p += 2) out[i] = lut[bytes[p + lo] | (bytes[p + hi] << 8)]
  return out
}

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)

/**
 * Half bit pattern nearest to `v` (ties to even; overflow gives infinity).
 * The value is first rounded to float32, so a float64 lying within a hair of a
 * half-way point may round differently than numpy's direct conversion.
 */
export function toFloat16Bits(v: number): number {
  f32[0] = v
  const x = u32[0]
  const sign = (x >>> 16) & 0x8000
  const exp = (x >>> 23) & 0xff
  let mant = x & 0x7fffff
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0)
  const e = exp - 112 // re-biased half exponent
  if (e >= 31) return sign | 0x7c00
  if (e <= 0) {
    if (e < -10) return sign
    mant |= 0x800000
    const shift = 14 - e
    let half = mant >>> shift
    const rem = mant & ((1 << shift) - 1)
    const halfway = 1 << (shift - 1)
    if (rem > halfway || (rem === halfway && half & 1)) half++
    return sign | half
  }
  let half = (e << 10) | (mant >>> 13)
  const rem = mant & 0x1fff
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++ // a carry into the exponent is still correct
  return sign | half
}
