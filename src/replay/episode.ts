/**
 * Replays a candidate policy over one baseline episode: every step's
 * observation (a zero-copy view of each `sensors.npz` array at that step) goes
 * to the policy, its actions are recorded against `actions.npz`, and the
 * per-episode metric blob comes out. Any error here fails only this episode.
 */
import type { MetricBlob } from '../eval/metric-blob.ts'
import { type Crc32, type Inflate, type NdArray, NpzError, readNpz, stepView } from './npz/index.ts'
import { atStep, withoutStack } from './errors.ts'
import { CandidateRecorder } from './metrics.ts'
import { baselineOutcome, candidateOutcome, type Outcome, outcomeSource } from './outcome.ts'
import { type Action, asPolicyObject, type CandidatePolicy, type Observation, type StepContext } from './policy.ts'

export type { Action, Observation, Policy } from './policy.ts'

/**
 * One baseline episode as `replayEpisode` takes it: the two downloaded
 * archives, the episode's metadata, and how to decode them.
 */
export interface EpisodeInput {
  /** The baseline's `actions.npz` bytes: the recorded actions the candidate's are compared with. */
  actions: Uint8Array
  /** The baseline's `sensors.npz` bytes: each step's observation comes from these arrays. */
  sensors: Uint8Array
  /** The baseline episode's metadata (outcome values). */
  metadata: Record<string, unknown>
  /** The inflater for deflated members (default: the fastest the runtime has). */
  inflate?: Inflate
  /** `actions` and `sensors` are handed over (fresh downloads): decode them in place, without copying stored arrays. */
  inPlace?: boolean
  /** Check each archive member's CRC-32 (see `ReadNpzOptions.verifyCrc`); default false here, on in `runAgainst`. */
  verifyCrc?: boolean | Crc32
  /** The most bytes each archive's compressed members may inflate to (see `ReadNpzOptions.maxInflatedBytes`; default no limit). */
  maxInflatedBytes?: number
  /** 0-based position of this baseline in the run (the policy's `episodeIndex`; default 0). */
  episodeIndex?: number
  /** The baseline's id, passed to the policy's context (default ''). */
  baselineEpisodeId?: string
}

/**
 * Runs the policy over one episode and returns its metric blob and candidate
 * outcome. A `PolicyObject`'s `reset` runs first, once the step count is known.
 */
export async function replayEpisode(candidatePolicy: CandidatePolicy, input: EpisodeInput): Promise<ReplayedEpisode> {
  const policy = asPolicyObject(candidatePolicy)
  // A bare function is called as one, so its stack frames read as the user wrote them.
  const bare = typeof candidatePolicy === 'function' ? candidatePolicy : (o: Observation, c: StepContext) => policy.act(o, c)
  // An error the policy throws, at once or through its promise, names the step it failed at.
  const act = (o: Observation, c: StepContext): ReturnType<typeof bare> => {
    try {
      const action = bare(o, c)
      return action instanceof Promise ? action.catch((error: unknown) => Promise.reject(atStep(error, c.step))) : action
    } catch (error) {
      throw atStep(error, c.step)
    }
  }
  const actions = readArchive(input.actions, 'actions.npz', input)
  const sensors = readArchive(input.sensors, 'sensors.npz', input)
  const recorder = new CandidateRecorder(actions)
  const steps = recorder.steps
  const keys = Object.keys(sensors)
  // Assigning to "__proto__" would set the observation's prototype instead of adding the key.
  const protoKey = keys.indexOf('__proto__')
  for (const key of keys) {
    const shape = sensors[key]!.shape
    if (shape.length > 0 && shape[0]! < steps) {
      throw withoutStack(new RangeError(`sensors.npz "${key}" has ${shape[0]} steps but actions.npz has ${steps}`))
    }
  }
  const episodeIndex = input.episodeIndex ?? 0
  const baselineEpisodeId = input.baselineEpisodeId ?? ''
  const metadata = input.metadata
  if (policy.reset) await policy.reset({ episodeIndex, baselineEpisodeId, steps, metadata })
  let sentinel: unknown
  const take = (step: number, action: unknown) => {
    if (action === null || typeof action !== 'object') {
      throw withoutStack(new TypeError(`policy returned ${action === null ? 'null' : typeof action} at step ${step}; expected an object keyed by namespace`))
    }
    recorder.record(step, action as Action)
    if ((action as Action)._outcome !== undefined) sentinel = (action as Action)._outcome
  }
  if (policy.actEpisode && typeof candidatePolicy !== 'function') {
    const actions = await policy.actEpisode(sensors, { episodeIndex, baselineEpisodeId, steps, metadata })
    if (!Array.isArray(actions) || actions.length !== steps) {
      throw withoutStack(
        new TypeError(`policy.actEpisode returned ${Array.isArray(actions) ? `${actions.length} actions` : typeof actions} for an episode of ${steps} steps`),
      )
    }
    for (let step = 0; step < steps; step++) take(step, actions[step])
    return result(recorder, input, sentinel)
  }
  // Replay is open loop (no observation depends on an action), so a remote policy that answers
  // in order may be sent the next steps before the current answer is back.
  const depth = Math.max(1, Math.floor(policy.pipelineDepth ?? 1))
  const inFlight: Promise<Action>[] = []
  let yielded = Date.now()
  for (let step = 0; step < steps; step++) {
    const observation: Observation = {}
    for (let k = 0; k < keys.length; k++) {
      const array = sensors[keys[k]!]!
      const value = array.shape.length === 0 ? array : stepView(array, step)
      if (k === protoKey) Object.defineProperty(observation, '__proto__', { value, enumerable: true, writable: true, configurable: true })
      else observation[keys[k]!] = value
    }
    const context: StepContext = { step, steps, episodeIndex, baselineEpisodeId, metadata }
    const action = act(observation, context)
    if (depth === 1) {
      take(step, action instanceof Promise ? await action : action)
      // A policy that answers without waiting on I/O would hold the thread for the whole episode:
      // every 50 ms, let timers, sockets and signals run (a Ctrl-C, a progress line, a keep-alive closing).
      if (Date.now() - yielded >= 50) {
        await new Promise((resolve) => setTimeout(resolve, 0))
        yielded = Date.now()
      }
      continue
    }
    const pending = Promise.resolve(action)
    pending.catch(() => {}) // a later step's failure is not reported once an earlier one has failed the episode
    inFlight.push(pending)
    // A full window drains to half before refilling, so steps go out (and come back) in batches:
    // one write per batch instead of one per step.
    if (inFlight.length === depth) {
      const first = step - depth + 1
      for (let k = 0; inFlight.length > depth >> 1; k++) take(first + k, await inFlight.shift())
    }
  }
  for (let step = steps - inFlight.length; inFlight.length > 0; step++) take(step, await inFlight.shift())
  return result(recorder, input, sentinel)
}

/** What `replayEpisode` gives: the metric blob, the candidate's outcome, and the keys when no action key paired. */
export interface ReplayedEpisode {
  /** The episode's metric blob, as the result upload sends it. */
  metrics: MetricBlob
  /** The candidate's outcome: what the policy reported through `_outcome`, the baseline's otherwise. */
  outcome: Outcome
  /** Set when the policy returned none of the baseline's action keys (see `CandidateRecorder.unpaired`). */
  unpaired?: { baseline: string[]; policy: string[] }
}

/** The episode's metric blob and candidate outcome, once every step's action is recorded. */
function result(recorder: CandidateRecorder, input: EpisodeInput, sentinel: unknown): ReplayedEpisode {
  const steps = recorder.steps
  const baseline = baselineOutcome(input.metadata)
  const candidate = candidateOutcome(sentinel, baseline)
  const { action_l2_mean, ood_action_share_candidate, ...actionEvidence } = recorder.metrics()
  // Actions a robot could not execute at any step: the episode failed, it was not a clean run
  // whose action metrics happen to be empty (its verdict would rest on what the policy says of itself).
  if (steps > 0 && actionEvidence.nonfinite_steps === steps) {
    throw withoutStack(
      new RangeError(`policy returned non-finite actions (NaN or Infinity) at every step (${steps} of ${steps}), so none of its actions could be measured`),
    )
  }
  const unpaired = recorder.unpaired()
  return {
    ...(unpaired ? { unpaired } : {}),
    outcome: candidate,
    metrics: {
      steps,
      success_baseline: baseline.success,
      success_candidate: candidate.success,
      reward_total_baseline: baseline.reward_total,
      reward_total_candidate: candidate.reward_total,
      collision_count_baseline: baseline.collision_count,
      collision_count_candidate: candidate.collision_count,
      time_to_goal_s_baseline: baseline.time_to_goal_s,
      time_to_goal_s_candidate: candidate.time_to_goal_s,
      action_l2_mean,
      ood_action_share_baseline: null,
      ood_action_share_candidate,
      action_l2_normalized_mean: actionEvidence.action_l2_normalized_mean,
      action_l2_by_key: actionEvidence.action_l2_by_key,
      nonfinite_steps: actionEvidence.nonfinite_steps,
      outcome_source: outcomeSource(sentinel),
    },
  }
}

function readArchive(bytes: Uint8Array, name: string, { inflate, inPlace, verifyCrc, maxInflatedBytes }: EpisodeInput): Record<string, NdArray> {
  try {
    return readNpz(bytes, { inflate, inPlace, verifyCrc, maxInflatedBytes })
  } catch (error) {
    const entry = error instanceof NpzError ? error.entry : null
    throw new NpzError(`${name}: ${error instanceof Error ? error.message : String(error)}`, { entry, cause: error })
  }
}
