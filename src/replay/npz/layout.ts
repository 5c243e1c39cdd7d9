import type { TypedArray } from './types.ts'

/**
 * Copies big-endian elements of `itemsize` bytes from `src` into `dst` (the
 * byte view of a fresh native, little-endian array), reversing each element.
 */
export function byteSwapInto(src: Uint8Array, dst: Uint8Array, itemsize: number): void {
  const n = dst.length
  if (itemsize === 2) {
    for (let p = 0; p < n; p += 2) {
      dst[p] = src[p + 1]
      dst[p + 1] = src[p]
    }
  } else {
    for (let p = 0; p < n; p += itemsize) {
      for (let k = 0; k < itemsize; k++) dst[p + k] = src[p + itemsize - 1 - k]
    }
  }
}

/**
 * Returns a new array of the same type holding `src`, whose elements are in
 * Fortran (column-major) order for `shape`, rearranged into C (row-major)
 * order. That is the reader's convention: `data` is always C order.
 */
export function fortranToC<T extends TypedArray>(src: T, shape: readonly number[]): T {
  const out = new (src.constructor as { new (n: number): T })(src.length)
  const nd = shape.length
  if (nd < 2 || src.length === 0) {
    out.set(src as never)
    return out
  }
  if (nd === 2) {
    const [rows, cols] = shape
    for (let i = 0, o = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[o++] = src[j * rows + i]
    return out
  }
  // General case: walk the C index like an odometer, keeping the Fortran offset in step.
  const stride: number[] = new Array(nd)
  for (let k = 0, s = 1; k < nd; k++) {
    stride[k] = s
    s *= shape[k]
  }
  const idx: number[] = new Array(nd).fill(0)
  let f = 0
  for (let o = 0; o < out.length; o++) {
    out[o] = src[f]
    for (let k = nd - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]) {
        f += stride[k]
        break
      }
      f -= stride[k] * (shape[k] - 1)
      idx[k] = 0
    }
  }
  return out
}
