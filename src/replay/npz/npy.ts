import { parseDescr } from './dtype.ts'
import { npzError } from './errors.ts'
import { decodeFloat16 } from './float16.ts'
import { byteSwapInto, fortranToC } from './layout.ts'
import { parseNpyHeader } from './npy-header.ts'
import { sizeOf, type NdArray, type TypedArray } from './types.ts'

/**
 * Decodes one `.npy` file into an `NdArray` in C order with native byte order.
 *
 * `owned` says whether the caller hands over `bytes` for good (a freshly
 * inflated buffer): then a little-endian, aligned payload becomes a zero-copy
 * view of it. Borrowed bytes (a stored entry inside the archive) are copied
 * exactly once into an aligned array. Big-endian data is byte-swapped and
 * `float16` widened straight from the file bytes into the fresh array; Fortran
 * order costs one more pass to transpose into C order.
 */
export function decodeNpy(bytes: Uint8Array, entry: string, owned: boolean): NdArray {
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
  let data: TypedArray
  if (dtype.name === 'float16') {
    data = decodeFloat16(payload, count, bigEndian)
  } else if (bigEndian && dtype.itemsize > 1) {
    data = new dtype.ctor(count)
    byteSwapInto(payload, new Uint8Array(data.buffer), dtype.itemsize)
  } else if (owned && payload.byteOffset % dtype.itemsize === 0) {
    data = new dtype.ctor(payload.buffer, payload.byteOffset, count)
  } else {
    // Not payload.slice(): on a Node Buffer input, slice() returns a view, not a copy.
    data = new dtype.ctor(count)
    new Uint8Array(data.buffer).set(payload)
  }
  if (header.fortranOrder) data = fortranToC(data, shape)
  return { dtype: dtype.name, shape, data, order: header.fortranOrder ? 'F' : 'C' }
}
