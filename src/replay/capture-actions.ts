/**
 * `--upload-actions`: keeps every action the candidate policy returns during
 * one replayed episode and writes them as an `actions.npz` shaped like the
 * baseline's (`[steps, ...per-step shape]` per key, float64), which the
 * runner uploads as the replay episode's `actions` artifact. The portal then
 * draws the candidate's actions beside the baseline's, key by key.
 *
 * It wraps the policy rather than the metrics recorder, so what is uploaded
 * is exactly what the policy returned. `_outcome` is not an action and is left
 * out; a key whose per-step shape changes between steps is left out too (the
 * metrics already refuse it against the baseline).
 */
import type { Action, Policy } from './episode.ts'
import { writeNpz } from './npz/write.ts'

interface Track {
  shape: number[]
  rows: Float64Array[]
  broken: boolean
}

/** The values of one step of one key, with its per-step shape; null when it is not a number array. */
function stepValues(value: unknown): { shape: number[]; data: Float64Array } | null {
  if (typeof value === 'number') return { shape: [], data: Float64Array.of(value) }
  if (typeof value === 'bigint' || typeof value === 'boolean') return { shape: [], data: Float64Array.of(Number(value)) }
  if (value === null || typeof value !== 'object') return null
  const shaped = 'shape' in value && 'data' in value ? (value as { shape: readonly number[]; data: ArrayLike<number | bigint> }) : null
  const data = (shaped ? shaped.data : value) as ArrayLike<number | bigint>
  if (typeof data.length !== 'number') return null
  const out = new Float64Array(data.length)
  for (let i = 0; i < data.length; i++) out[i] = Number(data[i])
  return { shape: shaped ? [...shaped.shape] : [data.length], data: out }
}

/**
 * A policy that records what `policy` returns, and the archive of it.
 *
 * @example
 * const capture = captureActions(policy)
 * await replayEpisode(capture.policy, input)
 * const npz = capture.archive() // Uint8Array of actions.npz, or null when nothing was returned
 */
export function captureActions(policy: Policy): { policy: Policy; record(action: Action): void; archive(): Uint8Array | null } {
  const tracks = new Map<string, Track>()
  const keep = (action: Action) => {
    if (action === null || typeof action !== 'object') return
    for (const [key, value] of Object.entries(action)) {
      if (key === '_outcome') continue
      const step = stepValues(value)
      let track = tracks.get(key)
      if (!track) tracks.set(key, track = { shape: step?.shape ?? [], rows: [], broken: step === null })
      if (!step || step.shape.join() !== track.shape.join()) track.broken = true
      else track.rows.push(step.data)
    }
  }
  const wrapped: Policy = (observation, context) => {
    const action = policy(observation, context)
    if (action instanceof Promise) return action.then((a) => (keep(a), a))
    keep(action)
    return action
  }
  return {
    policy: wrapped,
    /** Records one step's action returned another way (a whole episode's, in step order). */
    record: keep,
    archive() {
      const arrays: Record<string, { dtype: 'float64'; shape: number[]; data: Float64Array }> = {}
      for (const [key, track] of tracks) {
        if (track.broken || track.rows.length === 0) continue
        const width = track.rows[0]!.length
        const data = new Float64Array(track.rows.length * width)
        track.rows.forEach((row, i) => data.set(row, i * width))
        arrays[key] = { dtype: 'float64', shape: [track.rows.length, ...track.shape], data }
      }
      return Object.keys(arrays).length ? writeNpz(arrays, { compress: true }) : null
    },
  }
}
