/**
 * Time limits for a policy that answers with promises: a JavaScript policy
 * that awaits a model server over HTTP, say. `pythonPolicy` and
 * `websocketPolicy` take `timeoutMs` themselves (they also stop the process
 * or close the connection); this is the same limit for any `PolicyObject`.
 */
import { withoutStack } from './errors.ts'
import { type Action, asPolicyObject, callSite, type CandidatePolicy, type EpisodeContext, type PolicyObject } from './policy.ts'

/** A policy's promise did not settle within the limit; the episode fails with it. */
export class PolicyTimeout extends Error {
  /** Always `'PolicyTimeout'`, so the error can be matched by name across bundles. */
  override readonly name = 'PolicyTimeout'
}

/**
 * `policy` (a function or an object with `act`) with each `act` and `reset` promise given `timeoutMs` to settle
 * (`actEpisode`: `timeoutMs` times the episode's steps); past it the episode
 * fails with a `PolicyTimeout` naming the step, and the run goes on. The
 * late promise is not cancelled, only no longer awaited. A step that returns
 * synchronously is never timed: code that never returns holds the thread,
 * and nothing on it can interrupt it.
 *
 * @example
 * await runAgainst(run, timedPolicy((obs) => callMyModelServer(obs), 30_000))
 */
export function timedPolicy(candidate: CandidatePolicy, timeoutMs: number): PolicyObject {
  if (!(timeoutMs > 0)) throw new RangeError(`timedPolicy: timeoutMs must be a positive number (got ${timeoutMs})`)
  const policy = asPolicyObject(candidate)
  const limit = <T>(value: T | Promise<T>, ms: number, where: string): T | Promise<T> => {
    if (typeof (value as { then?: unknown } | null)?.then !== 'function') return value
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<never>((_, reject) => {
      const message = `the policy did not answer within ${+(ms / 1000).toPrecision(3)} s (${where})`
      timer = setTimeout(() => reject(withoutStack(new PolicyTimeout(message))), Math.min(ms, 2 ** 31 - 1))
    })
    return Promise.race([value, late]).finally(() => clearTimeout(timer))
  }
  const { reset, actEpisode } = policy
  return {
    act: (observation, context) => limit(policy.act(observation, context), timeoutMs, callSite(context, context.step)),
    reset: reset && ((context: EpisodeContext) => limit(reset.call(policy, context), timeoutMs, `reset before ${callSite(context)}`)),
    actEpisode: actEpisode &&
      ((observations, context): Action[] | Promise<Action[]> =>
        limit(actEpisode.call(policy, observations, context), timeoutMs * context.steps, callSite(context))),
    open: policy.open && (() => policy.open!()),
    close: policy.close && (() => policy.close!()),
    pipelineDepth: policy.pipelineDepth,
  }
}
