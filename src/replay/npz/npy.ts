import { parseDescr } from './dtype.ts'
import { npzError } from './errors.ts'
import { decodeFloat16 } from './float16.ts'
import { byteSwapInto, fortranToC } from './layout.ts'
import { parseNpyHeader } from './npy-header.ts'
import { type NdArray, sizeOf, type TypedArray } from './types.ts'

/**
 * What the decoder may do with the bytes it is given:
 * - `borrowed`: only read them; the payload is copied once into an aligned array.
 * - `owned`: keep them (a freshly inflated buffer); an aligned little-endian
 *   payload becomes a zero-copy view, a misaligned one is copied.
 * - `movable`: keep and overwrite them; a misaligned payload is shifted back
 *   over its own header (at most itemsize - 1 bytes, already parsed) and viewed.
 */
export type NpyBytes = 'borrowed' | 'owned' | 'movable'

/**
 * Decodes one `.npy` file into an `NdArray` in C order with native byte order.
 *
 * `use` says what may happen to `bytes` (see `NpyBytes`). Big-endian data is
 * byte-swapped and `float16` widened straight from the file bytes into a fresh
 * array; Fortran order costs one more pass to transpose into C order.
 */
export function decodeNpy(bytes: Uint8Array, entry: string, use: NpyBytes): NdArray {
  const header = parseNpyHeader(bytes, entry)
  const parsed = parseDescr(header.descr)
  if (typeof parsed === 'string') throw npzError(entry, parsed)
  const { dtype, bigEndian } = parsed
  const { shape, dataOffset } = header
  const count = sizeOf(shape)
  const nbytes = count * dtype.itemsize
  if (dataOffset + nbytes > bytes.length) {
    throw npzError(entry, `truncated data: shape (${shape.join(', ')}) needs ${nbytes} bytes, found ${bytes.length - dataOffset}`)
  }
  const payload = bytes.subarray(dataOffset, dataOffset + nbytes)
  // How far the payload sits past an element boundary of its buffer.
  const skew = payload.byteOffset % dtype.itemsize
  let data: TypedArray
  if (dtype.name === 'float16') {
    data = decodeFloat16(payload, count, bigEndian)
  } else if (bigEndian && dtype.itemsize > 1) {
    data = new dtype.ctor(count)
    byteSwapInto(payload, new Uint8Array(data.buffer), dtype.itemsize)
  } else if (use !== 'borrowed' && skew === 0) {
    data = new dtype.ctor(payload.buffer, payload.byteOffset, count)
  } else if (use === 'movable' && dataOffset >= skew) {
    // memmove within memory already paged in: no allocation, no page faults.
    const at = payload.byteOffset - skew
    new Uint8Array(payload.buffer).copyWithin(at, payload.byteOffset, payload.byteOffset + nbytes)
    data = new dtype.ctor(payload.buffer, at, count)
  } else {
    // Not payload.slice(): on a Node Buffer input, slice() returns a view, not a copy.
    data = new dtype.ctor(count)
    new Uint8Array(data.buffer).set(payload)
  }
  if (header.fortranOrder) data = fortranToC(data, shape)
  const array: NdArray = { dtype: dtype.name, shape, data, order: header.fortranOrder ? 'F' : 'C' }
  if (bigEndian && dtype.itemsize > 1) array.bigEndian = true
  return array
}
