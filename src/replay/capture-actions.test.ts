import { describe, expect, it } from 'vitest'
import { captureActions } from './capture-actions.ts'
import { readNpz } from './npz/read.ts'

/** The step context replay passes as the policy's second argument. */
const CONTEXT = { step: 0, steps: 3, episodeIndex: 0, baselineEpisodeId: 'b' }

describe('captureActions', () => {
  it('keeps what the policy returned, step by step, as [steps, ...shape] float64 arrays', async () => {
    let step = 0
    const capture = captureActions(() => {
      const i = step++
      return Promise.resolve({ arm: [i, i + 0.5], grip: i % 2, pose: { shape: [2, 2], data: Float32Array.of(i, 1, 2, 3) }, _outcome: { success: true } })
    })
    for (let i = 0; i < 3; i++) expect(await capture.policy({}, CONTEXT)).toHaveProperty('arm')
    const arrays = readNpz(capture.archive()!)
    expect(Object.keys(arrays).sort()).toEqual(['arm', 'grip', 'pose'])
    expect(arrays.arm!.shape).toEqual([3, 2])
    expect([...arrays.arm!.data]).toEqual([0, 0.5, 1, 1.5, 2, 2.5])
    expect(arrays.grip!.shape).toEqual([3])
    expect([...arrays.grip!.data]).toEqual([0, 1, 0])
    expect(arrays.pose!.shape).toEqual([3, 2, 2])
    expect(arrays.pose!.dtype).toBe('float64')
  })

  it('works with synchronous policies and leaves out keys whose shape changes', () => {
    let step = 0
    const capture = captureActions(() => ({ ok: [step, step], ragged: step++ === 0 ? [1] : [1, 2], text: 'no' }))
    capture.policy({}, CONTEXT)
    capture.policy({}, CONTEXT)
    const arrays = readNpz(capture.archive()!)
    expect(Object.keys(arrays)).toEqual(['ok'])
    expect([...arrays.ok!.data]).toEqual([0, 0, 1, 1])
  })

  it('has no archive when the policy returned nothing to keep', () => {
    expect(captureActions(() => ({})).archive()).toBeNull()
  })
})
