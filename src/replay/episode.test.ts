import { describe, expect, it } from 'vitest'
import { replayEpisode } from './episode.ts'
import { writeNpz } from './npz/index.ts'
import type { EpisodeContext, StepContext } from './policy.ts'

describe('replayEpisode', () => {
  it("gives reset and every step the episode's context, the baseline's metadata included", async () => {
    const position = { dtype: 'float64' as const, shape: [3, 2], data: Float64Array.of(1, 2, 3, 4, 5, 6) }
    const actions = writeNpz({ '/joint_states/position': position })
    const sensors = writeNpz({ '/joint_states/position': position })
    const metadata = { success: true, task: 'pick up the cup' }
    const resets: EpisodeContext[] = []
    const steps: StepContext[] = []
    await replayEpisode({
      reset: (context) => void resets.push(context),
      act: (observation, context) => {
        steps.push(context)
        return { '/joint_states/position': observation['/joint_states/position'] }
      },
    }, { actions, sensors, metadata, episodeIndex: 4, baselineEpisodeId: 'b-4' })
    expect(resets).toEqual([{ episodeIndex: 4, baselineEpisodeId: 'b-4', steps: 3, metadata }])
    expect(steps.map((c) => c.step)).toEqual([0, 1, 2])
    for (const context of steps) expect(context).toMatchObject({ steps: 3, episodeIndex: 4, baselineEpisodeId: 'b-4', metadata })
  })

  it('lets timers run during an episode whose policy never waits (every 50 ms)', async () => {
    const steps = 12
    const position = { dtype: 'float64' as const, shape: [steps, 1], data: new Float64Array(steps) }
    const input = { actions: writeNpz({ '/a': position }), sensors: writeNpz({ '/a': position }), metadata: {} }
    let firedAt: number | null = null
    let step = 0
    setTimeout(() => (firedAt = step), 0)
    await replayEpisode((observation, context) => {
      step = context.step
      const until = Date.now() + 20
      while (Date.now() < until);
      return { '/a': observation['/a'] }
    }, input)
    // 20 ms a step: the timer runs after the third step or so, not after the twelfth.
    expect(firedAt).not.toBeNull()
    expect(firedAt!).toBeLessThan(steps - 1)
  })

  it('passes a sensors key "__proto__" to the policy as an ordinary own key', async () => {
    const position = { dtype: 'float64' as const, shape: [2, 1], data: Float64Array.of(1, 2) }
    const sensors = writeNpz(JSON.parse('{"__proto__": {"dtype": "float64", "shape": [2], "data": [7, 8]}}'))
    const actions = writeNpz({ '/a': position })
    const seen: unknown[] = []
    await replayEpisode((observation) => {
      seen.push(Object.hasOwn(observation, '__proto__') && Object.getPrototypeOf(observation) === Object.prototype)
      return { '/a': [1] }
    }, { actions, sensors, metadata: {} })
    expect(seen).toEqual([true, true])
  })

  it('names the step in an error the policy throws or rejects with, keeping its stack', async () => {
    const position = { dtype: 'float64' as const, shape: [4, 1], data: Float64Array.of(1, 2, 3, 4) }
    const input = { actions: writeNpz({ '/a': position }), sensors: writeNpz({ '/a': position }), metadata: {} }
    const thrown = await replayEpisode((_obs, { step }) => {
      if (step === 2) throw new RangeError('joint 3 out of range')
      return { '/a': [1] }
    }, input).then(() => new Error('did not fail'), (e: Error) => e)
    expect(thrown.message).toBe('joint 3 out of range (step 2)')
    expect(thrown.stack).toMatch(/^RangeError: joint 3 out of range \(step 2\)\n\s+at .*episode\.test\.ts/)
    const rejected = await replayEpisode({
      pipelineDepth: 2,
      act: (_obs, { step }) => (step === 3 ? Promise.reject(new Error('server said no')) : Promise.resolve({ '/a': [1] })),
    }, input).then(() => new Error('did not fail'), (e: Error) => e)
    expect(rejected.message).toBe('server said no (step 3)')
    const text = await replayEpisode((_obs, { step }) => {
      if (step === 1) throw 'plain string'
      return { '/a': [1] }
    }, input).then(() => 'did not fail', (e: unknown) => e)
    expect(text).toBe('plain string (step 1)')
    // episodic's own checks name the step themselves, once.
    const wrong = await replayEpisode(() => null as never, input).then(() => new Error('did not fail'), (e: Error) => e)
    expect(wrong.message).toBe('policy returned null at step 0; expected an object keyed by namespace')
  })
})
