/**
 * bench/rollup: finalize of an eval run with 1,000 result rows (mark leftovers
 * skipped, read rows back, roll up, store the summary, in one transaction),
 * next to a plain SELECT of those rows on the same database in the same run.
 * Target: finalize under 3x the plain read.
 */
import { sql } from 'kysely'
import { createClient } from '../src/admin/admin.ts'
import { openDatabase } from '../src/db/open.ts'
import { createEvalRun, finalizeEvalRun, uploadResult } from '../src/eval/runs.ts'
import { insertEpisode } from '../src/ingest/episodes.ts'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { fmt, median, tempDatabase } from './lib.ts'

const ROWS = 1000
const RUNS = Number(process.env.BENCH_ROLLUP_RUNS ?? 7)

export async function main() {
  const temp = await tempDatabase()
  const db = await openDatabase({ url: temp.url, max: 4 })
  try {
    const client = await createClient({ db, sha256: NodeSha256 }, 'bench')
    const now = new Date()
    const baselines: string[] = []
    for (let i = 0; i < ROWS; i++) {
      const id = crypto.randomUUID()
      baselines.push(id)
      await insertEpisode(db, { id, clientId: client.id, name: null, source: 'real', robot: null, policyVersion: 'v1', envVersion: null, gitSha: null, seed: null, fps: null, metadata: {}, artifacts: [], now })
    }
    const runs: string[] = []
    for (let r = 0; r < RUNS; r++) {
      const run = await createEvalRun(db, { id: crypto.randomUUID(), clientId: client.id, candidatePolicyVersion: 'v2', baselinePolicyVersion: 'v1', baselineEpisodeIds: baselines, name: null, metadata: {}, now })
      runs.push(run.eval_run_id)
      for (const [i, id] of baselines.entries()) {
        if (i % 50 === 49) continue // a few stay pending and become skipped
        await uploadResult(db, client.id, run.eval_run_id, {
          baselineEpisodeId: id,
          status: i % 97 === 0 ? 'failed' : 'done',
          replayEpisodeId: null,
          error: null,
          metrics: { steps: 3000, success_baseline: i % 3 > 0, success_candidate: i % 4 > 0, reward_total_baseline: i, reward_total_candidate: i + 1, collision_count_baseline: i % 5, collision_count_candidate: i % 7, time_to_goal_s_baseline: 20, time_to_goal_s_candidate: 19, action_l2_mean: 0.1, ood_action_share_baseline: null, ood_action_share_candidate: 0.05 },
          now,
        })
      }
    }
    const selectMs: number[] = []
    const finalizeMs: number[] = []
    for (const run of runs) {
      for (let i = 0; i < 3; i++) {
        const t = performance.now()
        await sql`select baseline_episode_id, status, error, metrics, replay_episode_id, updated_at from eval_results where eval_run_id = ${run} order by position`.execute(db)
        selectMs.push(performance.now() - t)
      }
      const t = performance.now()
      await finalizeEvalRun(db, client.id, run, new Date())
      finalizeMs.push(performance.now() - t)
    }
    const f = median(finalizeMs)
    const s = median(selectMs)
    console.log(`\nbench/rollup: ${ROWS} result rows, ${RUNS} runs, medians`)
    console.log('| operation | ms |')
    console.log('|---|---:|')
    console.log(`| finalize (skip leftovers, roll up, store) | ${fmt(f, 2)} |`)
    console.log(`| plain SELECT of the rows | ${fmt(s, 2)} |`)
    console.log(`ratio finalize/select: ${fmt(f / s, 2)} (target < 3)`)
    return { finalizeMs: f, selectMs: s, ratio: f / s }
  } finally {
    await db.destroy()
    await temp.drop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
