import { describe, expect, it } from 'vitest'
import type { Action, StepContext } from './policy.ts'
import { PolicyTimeout, timedPolicy } from './timed-policy.ts'

const context = (step: number): StepContext => ({ episodeIndex: 3, baselineEpisodeId: 'b', steps: 4, step })
const never = new Promise<Action>(() => {})

describe('timedPolicy', () => {
  it('fails a step whose promise does not settle in time, naming it; answers in time pass through', async () => {
    const policy = timedPolicy({ act: (_obs, { step }) => (step === 2 ? never : Promise.resolve({ a: step })) }, 50)
    expect(await policy.act({}, context(1))).toEqual({ a: 1 })
    const late = Promise.resolve(policy.act({}, context(2)))
    await expect(late).rejects.toBeInstanceOf(PolicyTimeout)
    await expect(late).rejects.toMatchObject({ stack: 'PolicyTimeout: the policy did not answer within 0.05 s (episode 4, step 2)' })
  })

  it('leaves synchronous answers alone, and times reset and whole episodes (the limit times the steps)', async () => {
    const calls: string[] = []
    const policy = timedPolicy({
      act: () => ({ a: 1 }),
      reset: () => new Promise<void>(() => calls.push('reset')),
      actEpisode: () => never.then(() => []),
    }, 20)
    expect(policy.act({}, context(0))).toEqual({ a: 1 })
    await expect(Promise.resolve(policy.reset!({ episodeIndex: 3, baselineEpisodeId: 'b', steps: 4 }))).rejects.toThrow('(reset before episode 4)')
    await expect(Promise.resolve(policy.actEpisode!({}, { episodeIndex: 3, baselineEpisodeId: 'b', steps: 4 }))).rejects.toThrow(
      'the policy did not answer within 0.08 s (episode 4)',
    )
    expect(calls).toEqual(['reset'])
    expect(() => timedPolicy({ act: () => ({}) }, 0)).toThrow('timeoutMs must be a positive number')
  })

  it("takes a plain function policy as well (the spec's one-argument form)", async () => {
    const never = new Promise<never>(() => {})
    const policy = timedPolicy((obs: Record<string, unknown>) => (obs.late ? never : Promise.resolve({ a: 1 })), 30)
    const context = { step: 0, steps: 1, episodeIndex: 0, baselineEpisodeId: 'b' }
    expect(await policy.act({}, context)).toEqual({ a: 1 })
    await expect(policy.act({ late: true } as never, context)).rejects.toThrow('the policy did not answer within 0.03 s (episode 1, step 0)')
  })
})
