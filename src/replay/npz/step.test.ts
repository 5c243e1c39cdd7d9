import { describe, expect, it } from 'vitest'
import { type NdArray, stepView } from './index.ts'

describe('stepView', () => {
  const depth: NdArray = { dtype: 'float32', shape: [3, 2, 2], data: Float32Array.from({ length: 12 }, (_, i) => i), order: 'C' }

  it('returns step i as a zero-copy view with the step shape', () => {
    const s = stepView(depth, 1)
    expect(s).toEqual({ dtype: 'float32', shape: [2, 2], data: new Float32Array([4, 5, 6, 7]), order: 'C' })
    expect(s.data.buffer).toBe(depth.data.buffer)
    s.data[0] = 40
    expect(depth.data[4]).toBe(40)
    depth.data[4] = 4
  })

  it('gives scalars of a 1-d array as 0-d views', () => {
    const s = stepView({ dtype: 'int64', shape: [2], data: new BigInt64Array([7n, 8n]), order: 'C' }, 1)
    expect(s).toEqual({ dtype: 'int64', shape: [], data: new BigInt64Array([8n]), order: 'C' })
  })

  it('rejects steps outside the array and 0-d arrays', () => {
    expect(() => stepView(depth, 3)).toThrow('step 3 outside [0, 3)')
    expect(() => stepView(depth, -1)).toThrow(RangeError)
    expect(() => stepView(depth, 0.5)).toThrow(RangeError)
    expect(() => stepView({ dtype: 'float64', shape: [], data: new Float64Array(1), order: 'C' }, 0)).toThrow('0-d')
  })
})
