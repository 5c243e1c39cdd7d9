import { describe, expect, it } from 'vitest'
import { EpisodicError } from '../errors.ts'
import { replayEpisode } from './episode.ts'
import { MetricsError } from './errors.ts'
import type { CandidatePolicy } from './policy.ts'
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
  it("episodic's own checks on a policy's answers carry their message as the stack, not episodic's frames", async () => {
    const actions = writeNpz({ '/joint_states/position': { dtype: 'float64', shape: [2], data: new Float64Array([1, 2]) } })
    const sensors = writeNpz({ '/joint_states/position': { dtype: 'float64', shape: [2], data: new Float64Array([1, 2]) } })
    const cases: [unknown, string][] = [
      [() => null, 'TypeError: policy returned null at step 0; expected an object keyed by namespace'],
      [
        () => ({ '/joint_states/position': 'home' }),
        'MetricsError: action key "/joint_states/position": expected a number, an array or { shape, data }, got string',
      ],
      [() => ({ '/joint_states/position': 1, _outcome: { reward_total: 'lots' } }), 'TypeError: _outcome.reward_total: must be a finite number'],
      [() => ({ '/joint_states/position': 1, _outcome: { speed: 1 } }), 'TypeError: _outcome.speed: unknown key'],
    ]
    for (const [policy, stack] of cases) {
      const error = await replayEpisode(policy as CandidatePolicy, { actions, sensors, metadata: {} }).then(() => null, (e: Error) => e)
      expect(error?.stack).toBe(stack)
    }
  })
})
