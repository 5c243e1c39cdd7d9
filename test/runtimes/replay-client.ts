/**
 * The replay client as a user script, run on Node, Deno and Bun by
 * test/runtimes/replay.ts: records two baselines through signed URLs, replays
 * a small policy (sync on one episode's steps, async on the other's), one
 * failing episode, and prints a JSON report on the last line.
 */
import { EpisodicClient } from 'episodic/client'
import { completeRun, createRun, type Observation, recordEpisode, runAgainst } from 'episodic/replay'
import { runtimeEnvironment } from '../../src/client/environment.ts'

const STEPS = 30
const DOF = 7
const position = new Float64Array(STEPS * DOF).map((_, i) => Math.sin(i / 10))
const client = await EpisodicClient.connect()
const record = (metadata: Record<string, unknown>) =>
  recordEpisode(client, {
    actions: { '/joint_states/position': { data: position, shape: [STEPS, DOF] } },
    sensors: {
      '/joint_states/position': { data: position, shape: [STEPS, DOF] },
      '/camera/depth': { data: new Float32Array(STEPS * 64), shape: [STEPS, 8, 8] },
    },
    episode: { robot: 'arm', policy_version: 'base' },
    metadata,
  })
const baselines = [await record({ success: true, reward_total: 3 }), await record({ success: false, reward_total: 1 }), await record({ success: true })]

const run = await createRun({ candidatePolicyVersion: 'cand', baselineEpisodeIds: baselines, client })
let episode = 0
let step = 0
const results = await runAgainst(
  run,
  (obs: Observation) => {
    if (step++ % STEPS === 0) episode++
    if (episode === 3) throw new Error('policy failed on purpose')
    const action = { '/joint_states/position': Array.from(obs['/joint_states/position']!.data as Float64Array, (x) => x + 0.1) }
    return episode === 2 ? Promise.resolve(action) : action
  },
  { stderr: () => {} },
)
const { summary } = await completeRun(run)
console.log(
  JSON.stringify({
    statuses: results.map((r) => r.status),
    l2: results.map((r) => r.metrics?.action_l2_mean ?? null),
    replayEpisodes: results.filter((r) => r.replayEpisodeId).length,
    recommend: summary.recommend,
    failed: summary.episodes.failed,
    zlib: Boolean(runtimeEnvironment().inflateRawSync),
  }),
)
