import { describe, expect, it } from 'vitest'
import { EpisodicError } from '../errors.ts'
import { replayEpisode } from './episode.ts'
import { MetricsError } from './errors.ts'
import { actionMetrics } from './metrics.ts'
import { NpzError, readNpz, writeNpz } from './npz/index.ts'

describe('replay errors', () => {
  it('NPZ failures are NpzError, naming the entry, not the server’s HTTP error', () => {
    let caught: unknown
    try {
      readNpz(new Uint8Array([1, 2, 3]))
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(NpzError)
    expect(caught).not.toBeInstanceOf(EpisodicError)
    expect((caught as NpzError).name).toBe('NpzError')
    expect((caught as NpzError).message).toMatch(/^npz: /)
  })

  it('replayEpisode says which artifact failed and keeps the NpzError', async () => {
    const actions = writeNpz({ '/joint_states/position': { dtype: 'float64', shape: [2], data: new Float64Array([1, 2]) } })
    const failing = replayEpisode(() => ({}), { actions, sensors: new Uint8Array([0]), metadata: {} })
    await expect(failing).rejects.toBeInstanceOf(NpzError)
    await expect(failing).rejects.toThrow(/^sensors\.npz: npz/)
  })

  it('metrics failures are MetricsError carrying the action key', () => {
    const baseline = { '/joint_states/position': { dtype: 'float64' as const, shape: [2, 3], order: 'C' as const, data: new Float64Array(6) } }
    let caught: unknown
    try {
      actionMetrics(baseline, { '/joint_states/position': { dtype: 'float64', shape: [2, 6], order: 'C', data: new Float64Array(12) } })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(MetricsError)
    expect(caught).not.toBeInstanceOf(EpisodicError)
    expect((caught as MetricsError).key).toBe('/joint_states/position')
    expect((caught as MetricsError).message).toContain('candidate shape [2, 6] does not match baseline shape [2, 3]')
  })
})
