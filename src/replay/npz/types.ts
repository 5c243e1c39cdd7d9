/**
 * The array shapes shared by the NPZ reader, the writer and the replay metrics.
 * Everything here is plain data, so arrays cross runtimes (Node, Deno, Bun,
 * Workers) and worker boundaries without a class to rehydrate.
 */

/**
 * Numpy dtype names this package reads and writes. Note the two widened ones:
 * `bool` is carried as a `Uint8Array` of 0/1 and `float16` as a `Float32Array`
 * (JavaScript has no half-float array in every runtime we target).
 */
export type DType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'float16'
  | 'float32'
  | 'float64'

/** Any typed array an `NdArray` can hold (64-bit integers come as BigInt arrays). */
export type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array

/**
 * An n-dimensional array: `data` holds the elements in C (row-major) order,
 * whatever the layout in the archive was, so `a[i, j]` of a `[n, m]` array is
 * `data[i * m + j]`. A 0-d array has `shape` `[]` and one element.
 *
 * `order` records the archive's layout: `'F'` means numpy stored the array in
 * Fortran order and the reader transposed it into C order on read.
 *
 * @example
 * const { shape, data } = arrays['/joint_states/position'] // shape [3000, 7], Float64Array
 */
export interface NdArray {
  /** The element type, numpy's name for it (`'float64'`, `'int32'`, ...). */
  dtype: DType
  /** The array's dimensions; the first is the step for episode arrays. */
  shape: number[]
  /** The elements in C (row-major) order. */
  data: TypedArray
  /** The order the archive stored the array in (see above). */
  order: 'C' | 'F'
  /**
   * Set when the archive stored the elements big-endian (`>f8`): `data` holds
   * them in native order all the same; the Python bridge gives numpy the
   * recorded dtype. Absent for little-endian and one-byte types.
   */
  bigEndian?: true
}

/**
 * What `writeNpz` accepts: a typed array or plain array (1-d, dtype from its
 * type) or an object with `data` in C order and optional `dtype` / `shape`.
 * Plain number, bigint or boolean arrays are converted to `dtype` (default
 * `float64`, or `bool` for booleans, `int64` for bigints).
 */
export type NdArrayLike =
  | TypedArray
  | readonly number[]
  | readonly bigint[]
  | readonly boolean[]
  | {
    dtype?: DType
    shape?: readonly number[]
    data: TypedArray | ArrayLike<number> | ArrayLike<bigint> | ArrayLike<boolean>
  }

/** Number of elements of a shape (1 for a 0-d shape). */
export function sizeOf(shape: readonly number[]): number {
  let n = 1
  for (let i = 0; i < shape.length; i++) n *= shape[i]
  return n
}
