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
})
