/**
 * Replays a candidate policy over one baseline episode: every step's
 * observation (a zero-copy view of each `sensors.npz` array at that step) goes
 * to the policy, its actions are recorded against `actions.npz`, and the
 * per-episode metric blob comes out. Any error here fails only this episode.
 */
import type { MetricBlob } from '../eval/metric-blob.ts'
import { readNpz, stepView, type Crc32, type Inflate, type NdArray } from './npz/index.ts'
import { CandidateRecorder } from './metrics.ts'
import { baselineOutcome, candidateOutcome, type Outcome } from './outcome.ts'

/** One step's observation: each recorded namespace's array at that step. */
export type Observation = Record<string, NdArray>

/** What a policy returns for one step: namespaces to action values, and optionally `_outcome` on the last step. */
export type Action = Record<string, unknown>

/**
 * The candidate policy: observation in, action out, sync or async. Keys of the
 * action pair with the baseline's `actions.npz` keys by name; shapes must match.
 */
export type Policy = (observation: Observation) => Action | Promise<Action>

export interface EpisodeInput {
  actions: Uint8Array
  sensors: Uint8Array
  /** The baseline episode's metadata (outcome values). */
  metadata: Record<string, unknown>
  inflate?: Inflate
  /** `actions` and `sensors` are handed over (fresh downloads): decode them in place, without copying stored arrays. */
  inPlace?: boolean
  /** Check each archive member's CRC-32 (see `ReadNpzOptions.verifyCrc`); default false here, on in `runAgainst`. */
  verifyCrc?: boolean | Crc32
}

/** Runs the policy over one episode and returns its metric blob and candidate outcome. */
export async function replayEpisode(policy: Policy, input: EpisodeInput): Promise<{ metrics: MetricBlob; outcome: Outcome }> {
  const actions = readArchive(input.actions, 'actions.npz', input)
  const sensors = readArchive(input.sensors, 'sensors.npz', input)
  const recorder = new CandidateRecorder(actions)
  const steps = recorder.steps
  const keys = Object.keys(sensors)
  for (const key of keys) {
    const shape = sensors[key]!.shape
    if (shape.length > 0 && shape[0]! < steps) {
      throw new RangeError(`sensors.npz "${key}" has ${shape[0]} steps but actions.npz has ${steps}`)
    }
  }
  let sentinel: unknown
  for (let step = 0; step < steps; step++) {
    const observation: Observation = {}
    for (let k = 0; k < keys.length; k++) {
      const array = sensors[keys[k]!]!
      observation[keys[k]!] = array.shape.length === 0 ? array : stepView(array, step)
    }
    let action = policy(observation)
    if (action instanceof Promise) action = await action
    if (action === null || typeof action !== 'object') throw new TypeError(`policy returned ${action === null ? 'null' : typeof action} at step ${step}; expected an object keyed by namespace`)
    recorder.record(step, action)
    if ((action as Action)._outcome !== undefined) sentinel = (action as Action)._outcome
  }
  const baseline = baselineOutcome(input.metadata)
  const candidate = candidateOutcome(sentinel, baseline)
  const { action_l2_mean, ood_action_share_candidate } = recorder.metrics()
  return {
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
    },
  }
}

function readArchive(bytes: Uint8Array, name: string, { inflate, inPlace, verifyCrc }: EpisodeInput): Record<string, NdArray> {
  try {
    return readNpz(bytes, { inflate, inPlace, verifyCrc })
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error })
  }
}
