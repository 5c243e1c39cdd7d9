/**
 * A small seeded pseudo-random source for the bootstrap: the seed string is
 * hashed (FNV-1a, 32 bits, over its UTF-16 code units) and expanded by
 * SplitMix32 into the 128-bit state of xoshiro128** (Blackman & Vigna 2018).
 * The same seed always gives the same stream, on every runtime, so the same
 * result rows always give the same interval.
 *
 * @example
 * const next = seededUint32('9b2c…/reward_mean')
 * const index = uniformIndex(next, 1000) // 0..999
 */

/** FNV-1a over the string's UTF-16 code units, as an unsigned 32-bit integer. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** SplitMix32 (the 32-bit variant of Steele, Lea & Flood's SplitMix), used only to spread the seed. */
function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0
  let z = state.s
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
  return (z ^ (z >>> 16)) >>> 0
}

/** A generator of unsigned 32-bit integers (xoshiro128**) from four state words, not all zero. */
export function xoshiro128ss(a: number, b: number, c: number, d: number): () => number {
  let s0 = a | 0, s1 = b | 0, s2 = c | 0, s3 = d | 0
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1
  return () => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9)
    const t = s1 << 9
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotl(s3, 11)
    return result >>> 0
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k))
}

/**
 * The xoshiro128** state words for `seed`, for code that runs the generator
 * inline (the bootstrap's inner loop keeps them in local variables, which is
 * several times faster than calling a closure per draw) and writes them back.
 */
export function seedState(seed: string): Int32Array {
  const state = { s: fnv1a32(seed) }
  const words = Int32Array.of(splitmix32(state), splitmix32(state), splitmix32(state), splitmix32(state))
  if ((words[0]! | words[1]! | words[2]! | words[3]!) === 0) words[0] = 1
  return words
}

/** A deterministic stream of unsigned 32-bit integers for `seed`. */
export function seededUint32(seed: string): () => number {
  const [a, b, c, d] = seedState(seed)
  return xoshiro128ss(a!, b!, c!, d!)
}

/**
 * An index in [0, n) from one 32-bit draw (multiply-shift; the bias is at
 * most n / 2^32, below 3e-6 for the 10,000 pairs a run can have).
 */
export function uniformIndex(next: () => number, n: number): number {
  return Math.floor((next() * n) / 4294967296)
}
