/**
 * What `runAgainst` accepts as a candidate policy. The spec's contract is a
 * function from one step's observation to its action; it still works
 * unchanged. Beside it:
 *
 * - the function also receives a `StepContext` (step index, step count,
 *   episode index, baseline id), so a stateful or action-chunking policy can
 *   tell a new episode from the next step without a reset hook;
 * - a `PolicyObject` adds a life cycle: `open` (start a process, connect),
 *   `reset` before each episode, `close`. `pythonPolicy` and
 *   `websocketPolicy` return one; a JavaScript policy can be one too.
 */
import type { NdArray } from './npz/index.ts'

/** One step's observation: each recorded namespace's array at that step. */
export type Observation = Record<string, NdArray>

/**
 * What a policy may report about its own episode through `_outcome` on the
 * last step; a field left out (or null) falls back to the baseline's value.
 */
export interface ReportedOutcome {
  /** Whether the candidate would have reached the goal. */
  success?: boolean | null
  /** Its summed reward. */
  reward_total?: number | null
  /** Its collisions, an integer >= 0. */
  collision_count?: number | null
  /** Seconds it would have taken to reach the goal. */
  time_to_goal_s?: number | null
}

/** What a policy returns for one step: namespaces to action values, and optionally `_outcome` on the last step. */
export type Action = { [key: string]: unknown; _outcome?: ReportedOutcome }

/** Which episode is about to be replayed; `reset` receives it. */
export interface EpisodeContext {
  /** 0-based position of this baseline in the run's `baselineEpisodeIds`. */
  episodeIndex: number
  /** The baseline episode being replayed. */
  baselineEpisodeId: string
  /** Steps in this episode (the leading dimension of its `actions.npz` arrays). */
  steps: number
  /**
   * The baseline episode's metadata, as the service returns it (a
   * language-conditioned policy's task instruction, say). Set when replay
   * runs the policy; absent when a policy is called some other way.
   */
  metadata?: Record<string, unknown>
}

/**
 * Where a policy call was, for messages a person reads: the episode counted
 * from 1 as replay's progress lines count it (`[2/5]`), the step from 0 as the
 * arrays index it. Internal: `episodeIndex` itself stays 0-based.
 */
export function callSite(context: EpisodeContext, step?: number): string {
  return step === undefined ? `episode ${context.episodeIndex + 1}` : `episode ${context.episodeIndex + 1}, step ${step}`
}

/** Where a policy call sits: the episode's context plus the step. */
export interface StepContext extends EpisodeContext {
  /** 0-based step index within the episode; `0` starts a new episode. */
  step: number
}

/**
 * The candidate policy: observation in, action out, sync or async. Keys of the
 * action pair with the baseline's `actions.npz` keys by name; shapes must
 * match. The second argument is optional to use: one-argument policies (the
 * spec's contract) ignore it.
 *
 * @example
 * // An action-chunking policy: plan 8 steps, replan at each chunk boundary or new episode.
 * let chunk: Float64Array[] = []
 * const policy: Policy = (obs, { step }) => {
 *   if (step % 8 === 0) chunk = plan(obs, 8)
 *   return { '/joint_states/position': chunk[step % 8] }
 * }
 */
export type Policy = (observation: Observation, context: StepContext) => Action | Promise<Action>

/**
 * A policy with a life cycle. `runAgainst` calls `open` once before the first
 * episode (an error there stops the run, since no episode could succeed),
 * `reset` before each episode and `act` at each step (an error in either
 * fails that episode only). It never calls `close`: the caller owns the
 * object and may reuse it for several runs.
 *
 * @example
 * const policy = pythonPolicy({ module: 'lab.policies:act' })
 * try { await runAgainst(run, policy) } finally { await policy.close() }
 */
export interface PolicyObject {
  /** Returns the actions for one step's observation; an error fails this episode only. */
  act(observation: Observation, context: StepContext): Action | Promise<Action>
  /** Called before each episode, to clear state carried between steps. */
  reset?(context: EpisodeContext): void | Promise<void>
  /**
   * Optional: answers a whole episode at once, called (after `reset`)
   * instead of `act` for each step. `observations` holds each namespace's
   * whole array (leading dimension: at least `context.steps` steps; 0-d
   * arrays as they are), valid until the episode ends; the result holds one
   * action per step, in step order. Replay is open loop, so a policy in
   * another process (`pythonPolicy`) sends the episode in one message
   * instead of a round trip per step; its callable still sees one step at
   * a time. An error fails this episode only.
   */
  actEpisode?(observations: Observation, context: EpisodeContext): Action[] | Promise<Action[]>
  /** Called once before the first episode (start a process, connect); an error stops the run. */
  open?(): Promise<void>
  /** Releases what `open` acquired; the caller calls it, never the harness. */
  close?(): Promise<void>
  /**
   * Steps that may be handed to `act` before the earlier ones' actions are
   * back (default 1: one at a time). Replay is open loop, so a policy in
   * another process that answers in order (`pythonPolicy`,
   * `websocketPolicy`) hides its round trip this way; its calls still run
   * in step order.
   */
  pipelineDepth?: number
}

/** Either form `runAgainst` accepts. */
export type CandidatePolicy = Policy | PolicyObject

/** The object form of either (a bare function becomes `{ act }`); throws on anything else, naming what it got. */
export function asPolicyObject(policy: CandidatePolicy): PolicyObject {
  if (typeof policy === 'function') return { act: policy }
  if (policy !== null && typeof policy === 'object' && typeof (policy as PolicyObject).act === 'function') {
    for (const hook of ['reset', 'open', 'close', 'actEpisode'] as const) {
      const value = (policy as PolicyObject)[hook]
      if (value !== undefined && typeof value !== 'function') throw new TypeError(`policy.${hook} must be a function (got ${typeof value})`)
    }
    return policy
  }
  throw new TypeError(`policy must be a function (observation, context) => action or an object with act(); got ${policy === null ? 'null' : typeof policy}`)
}
