/**
 * Records an episode from TypeScript: writes `actions.npz` and `sensors.npz`
 * (numpy reads them back identically), opens the episode, uploads both
 * through their signed URLs and finalizes it with the byte count.
 *
 * @example
 * const id = await recordEpisode(client, {
 *   actions: { '/joint_states/position': { data: positions, shape: [steps, 7] } },
 *   sensors: { '/camera/depth': { data: depth, shape: [steps, 64, 64] } },
 *   episode: { robot: 'arm-1', policy_version: 'v1', fps: 30 },
 *   metadata: { success: true, reward_total: 12.5, collision_count: 0, time_to_goal_s: 8.2 },
 * })
 */
import type { EpisodicClient, OpenEpisodeRequest } from '../client/client.ts'
import { ConfigurationError } from '../client/errors.ts'
import { type NdArrayLike, writeNpz } from './npz/index.ts'

/**
 * One episode for `recordEpisode`: its arrays by namespace, written as
 * `actions.npz` and `sensors.npz`, plus the open and finalize fields.
 */
export interface RecordEpisodeInput {
  /** The recorded actions, keyed by namespace (`'/joint_states/position'`); the first dimension is the step. */
  actions: Record<string, NdArrayLike>
  /** The observations, keyed by namespace; the first dimension is the step. */
  sensors: Record<string, NdArrayLike>
  /** Open-time fields (name, robot, policy_version, fps, ...); `request_uploads` is set here. */
  episode?: Omit<OpenEpisodeRequest, 'request_uploads' | 'metadata'>
  /** Episode metadata; the replay harness reads the baseline outcome from it. */
  metadata?: Record<string, unknown>
  /** Wall-clock duration for the finalize roll-up. */
  durationS?: number
  /** Deflate the archives (default true). */
  compress?: boolean
}

/** Records one episode and returns its id. */
export async function recordEpisode(client: EpisodicClient, input: RecordEpisodeInput): Promise<string> {
  const compress = input.compress ?? true
  const archives = { actions: writeNpz(input.actions, { compress }), sensors: writeNpz(input.sensors, { compress }) }
  const opened = await client.openEpisode({ ...input.episode, metadata: input.metadata ?? {}, request_uploads: ['actions', 'sensors'] })
  if (opened.storage !== 'r2') throw new ConfigurationError('the service has no object storage configured (storage: "unconfigured"); cannot upload')
  for (const entry of opened.upload_urls) await client.upload(entry, archives[entry.kind as 'actions' | 'sensors'])
  await client.finalizeEpisode(opened.episode_id, {
    status: 'ready',
    bytes_total: archives.actions.byteLength + archives.sensors.byteLength,
    ...(input.durationS === undefined ? {} : { duration_s: input.durationS }),
  })
  return opened.episode_id
}
