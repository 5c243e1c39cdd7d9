import { describe, expect, it } from 'vitest'
import { arrayColumns, componentLabels, keyColumns, MAX_PLOT_COMPONENTS } from './columns.ts'

describe('artifact arrays as plot columns', () => {
  it('labels components by their index', () => {
    expect(componentLabels([])).toEqual(['value'])
    expect(componentLabels([3])).toEqual(['[0]', '[1]', '[2]'])
    expect(componentLabels([2, 2])).toEqual(['[0,0]', '[0,1]', '[1,0]', '[1,1]'])
  })

  it('splits a [steps, m] array into m columns, bigints and bools as numbers', () => {
    const c = arrayColumns({ dtype: 'float32', shape: [3, 2], data: Float32Array.from([1, 2, 3, 4, 5, 6]), order: 'C' })
    expect(c.steps).toBe(3)
    expect(c.columns.map((x) => [x.label, [...x.values]])).toEqual([['[0]', [1, 3, 5]], ['[1]', [2, 4, 6]]])
    const big = arrayColumns({ dtype: 'int64', shape: [2], data: BigInt64Array.from([5n, -7n]), order: 'C' })
    expect([...big.columns[0]!.values]).toEqual([5, -7])
    expect(arrayColumns({ dtype: 'float64', shape: [], data: Float64Array.from([1]), order: 'C' }).columns).toEqual([])
  })

  it('pairs the sources of a key component by component', () => {
    const a = { dtype: 'float64' as const, shape: [2, 2], data: Float64Array.from([1, 2, 3, 4]), order: 'C' as const }
    const b = { dtype: 'float64' as const, shape: [3, 2], data: Float64Array.from([1, 2, 3, 4, 5, 6]), order: 'C' as const }
    const keys = keyColumns([{ label: 'baseline', arrays: { cmd: a, only: a } }, { label: 'candidate', arrays: { cmd: b } }])
    expect(keys.map((k) => [k.key, k.steps, k.components, k.columns.map((c) => c.label)])).toEqual([
      ['cmd', 3, 2, ['baseline [0]', 'candidate [0]', 'baseline [1]', 'candidate [1]']],
      ['only', 2, 2, ['baseline [0]', 'baseline [1]']],
    ])
  })
})

describe('keys too wide to plot', () => {
  it('leaves out a key with more than MAX_PLOT_COMPONENTS per step (a camera image), keeping its shape to say so', () => {
    const steps = 4
    const rgb = { dtype: 'uint8' as const, shape: [steps, 96, 96, 3], data: new Uint8Array(steps * 96 * 96 * 3), order: 'C' as const }
    const state = { dtype: 'float64' as const, shape: [steps, 7], data: new Float64Array(steps * 7), order: 'C' as const }
    const keys = keyColumns([{ arrays: { '/camera/rgb': rgb, '/joint_states/position': state } }])
    expect(keys.map((k) => [k.key, k.columns.length, k.omitted])).toEqual([
      ['/camera/rgb', 0, [96, 96, 3]],
      ['/joint_states/position', 7, undefined],
    ])
    expect(keys[0]).toMatchObject({ steps, components: 27_648 })
    expect(MAX_PLOT_COMPONENTS).toBe(64)
  })
})
