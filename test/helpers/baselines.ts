/**
 * Records small baseline episodes through the real upload path: a 7-dof
 * joint trajectory as the actions, joint states plus a 4x4 depth image per
 * step as the sensors, and outcome values in the metadata.
 */
import type { EpisodicClient } from '../../src/client/client.ts'
import { recordEpisode } from '../../src/replay/record.ts'

export const STEPS = 20
export const DOF = 7

/** Baseline action at (step, joint): a smooth deterministic trajectory. */
export const baselineAction = (step: number, joint: number) => Math.sin(step / 5 + joint)

export async function recordBaseline(
  client: EpisodicClient,
  metadata: Record<string, unknown> = { success: true, reward_total: 10, collision_count: 1, time_to_goal_s: 5 },
): Promise<string> {
  const position = new Float64Array(STEPS * DOF)
  for (let s = 0; s < STEPS; s++) for (let j = 0; j < DOF; j++) position[s * DOF + j] = baselineAction(s, j)
  const depth = new Float32Array(STEPS * 16).map((_, i) => i / 16)
  return await recordEpisode(client, {
    actions: { '/joint_states/position': { data: position, shape: [STEPS, DOF] } },
    sensors: { '/joint_states/position': { data: position, shape: [STEPS, DOF] }, '/camera/depth': { data: depth, shape: [STEPS, 4, 4] } },
    episode: { robot: 'arm-1', policy_version: 'base-v1', fps: 10 },
    metadata,
    durationS: STEPS / 10,
  })
}
