/**
 * Records three baseline episodes of a scripted 7-dof reach (the "baseline
 * policy"), the way a robot logger would: joint positions as actions.npz,
 * joint states and a 16x16 depth image per step as sensors.npz, and the
 * episode outcome in the metadata. Prints the ids and writes them to
 * baselines.txt beside this file (for --baseline-episodes @baselines.txt).
 *
 *   EPISODIC_API_KEY=epk_... npx tsx examples/replay/record-baselines.ts
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { EpisodicClient } from '../../src/client/index.ts'
import { recordEpisode } from '../../src/replay/index.ts'

const STEPS = 200
const DOF = 7
const FPS = 20

/** The scripted baseline: each joint eases toward its target. */
function scriptedReach(seed: number) {
  const position = new Float64Array(STEPS * DOF)
  const velocity = new Float64Array(STEPS * DOF)
  const depth = new Float32Array(STEPS * 16 * 16)
  for (let s = 0; s < STEPS; s++) {
    for (let j = 0; j < DOF; j++) {
      const target = Math.sin(seed + j)
      const p = target * (1 - Math.exp(-s / 40))
      position[s * DOF + j] = p
      velocity[s * DOF + j] = s === 0 ? 0 : (p - position[(s - 1) * DOF + j]!) * FPS
    }
    for (let k = 0; k < 256; k++) depth[s * 256 + k] = 1.5 - 0.5 * Math.exp(-s / 80) + 0.01 * (k % 16)
  }
  return { position, velocity, depth }
}

const client = await EpisodicClient.connect()
const ids: string[] = []
for (let seed = 0; seed < 3; seed++) {
  const { position, velocity, depth } = scriptedReach(seed)
  const id = await recordEpisode(client, {
    actions: { '/joint_states/position': { data: position, shape: [STEPS, DOF] } },
    sensors: {
      '/joint_states/position': { data: position, shape: [STEPS, DOF] },
      '/joint_states/velocity': { data: velocity, shape: [STEPS, DOF] },
      '/camera/depth': { data: depth, shape: [STEPS, 16, 16] },
    },
    episode: { name: `reach-${seed}`, robot: 'arm-7dof', policy_version: 'scripted-v1', env_version: 'tabletop-1', fps: FPS, seed },
    metadata: { task: 'reach', success: seed !== 2, reward_total: 10 - seed, collision_count: seed === 2 ? 1 : 0, time_to_goal_s: 6 + seed },
    durationS: STEPS / FPS,
  })
  ids.push(id)
  console.log(`recorded baseline ${id} (reach-${seed})`)
}
const file = fileURLToPath(new URL('./baselines.txt', import.meta.url))
writeFileSync(file, ids.join('\n') + '\n')
console.log(`wrote ${ids.length} ids to ${file}`)
