import type { NdArray } from './types.ts'

/**
 * Step `i` of an array whose leading dimension counts steps, as a zero-copy
 * view: for a `[3000, 64, 64]` depth stream, `stepView(depth, 10)` has shape
 * `[64, 64]` and its `data` is a `subarray` of the episode's buffer (writes
 * show through; copy with `.slice()` to keep a step beyond the episode).
 *
 * @example
 * for (let i = 0; i < steps; i++) policy({ '/camera/depth': stepView(depth, i) })
 */
export function stepView(arr: NdArray, i: number): NdArray {
  const { shape } = arr
  if (shape.length === 0) throw new RangeError('stepView: a 0-d array has no steps')
  if (!(i >= 0 && i < shape[0] && Number.isInteger(i))) throw new RangeError(`stepView: step ${i} outside [0, ${shape[0]})`)
  const stepShape = shape.slice(1)
  let width = 1
  for (let k = 0; k < stepShape.length; k++) width *= stepShape[k]
  const view: NdArray = { dtype: arr.dtype, shape: stepShape, data: arr.data.subarray(i * width, i * width + width), order: 'C' }
  if (arr.bigEndian) view.bigEndian = true
  return view
}
