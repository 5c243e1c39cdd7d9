/**
 * bench/rollup: finalize of an eval run (mark leftovers skipped, read the rows
 * back, roll up with the statistics: Newcombe intervals, McNemar, 2,000
 * bootstrap resamples, the verdict; store the summary; one transaction) for
 * 100, 1,000 and 10,000 result rows, next to a plain SELECT of the same rows
 * on the same database in the same run. Target at 1,000 rows: finalize under
 * 3x the plain read.
 *
 *   npx tsx bench/rollup.ts            (BENCH_ROLLUP_SIZES=1000 BENCH_ROLLUP_RUNS=7 to narrow)
 */
import { type Kysely, sql } from 'kysely'
import { createClient } from '../src/admin/admin.ts'
import type { Database } from '../src/db/schema.ts'
import { openDatabase } from '../src/db/open.ts'
import { createEvalRun, finalizeEvalRun } from '../src/eval/runs.ts'
import { insertEpisodes } from '../src/episodes/rows.ts'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { fmt, median, tempDatabase } from './lib.ts'

const SIZES = (process.env.BENCH_ROLLUP_SIZES ?? '100,1000,10000').split(',').map(Number)
const RUNS = Number(process.env.BENCH_ROLLUP_RUNS ?? 7)

/**
 * Fills a run's rows in one statement, as `runAgainst` would have: a realistic
 * 0.2 metric blob (outcome values, action evidence, provenance) per done row,
 * one row in 97 failed, one in 50 left pending (it becomes skipped).
 */
export async function fillResults(db: Kysely<Database>, runId: string): Promise<void> {
  await sql`
    update eval_results set
      status = case when position % 97 = 0 then 'failed' else 'done' end,
      error = case when position % 97 = 0 then 'ValueError: action shape (7,) != (6,)' end,
      metrics = case when position % 97 = 0 then null else jsonb_build_object(
        'steps', 3000,
        'success_baseline', position % 3 > 0, 'success_candidate', position % 4 > 0,
        'reward_total_baseline', position, 'reward_total_candidate', position + 1 + (position % 7) * 0.37 - 1.1,
        'collision_count_baseline', position % 5, 'collision_count_candidate', position % 7,
        'time_to_goal_s_baseline', 20, 'time_to_goal_s_candidate', 19 + (position % 11) * 0.2,
        'action_l2_mean', 0.1, 'action_l2_normalized_mean', 0.04,
        'action_l2_by_key', jsonb_build_object('/joint_states/position', 0.08, '/joint_states/velocity', 0.05, '/gripper', 0.01),
        'nonfinite_steps', 0,
        'ood_action_share_baseline', null, 'ood_action_share_candidate', 0.05,
        'outcome_source', jsonb_build_object('success', 'reported', 'reward_total', 'reported', 'collision_count', 'recorded', 'time_to_goal_s', 'reported')
      ) end
    where eval_run_id = ${runId} and position % 50 <> 49`.execute(db)
}

/** Untimed finalizes first, so the timed ones run warm code (JIT, prepared statements), as a serving process does. */
const WARMUP = 2

async function measure(db: Kysely<Database>, clientId: string, rows: number, runs: number) {
  const now = new Date()
  const baselines = Array.from({ length: rows }, () => crypto.randomUUID())
  for (let i = 0; i < rows; i += 1000) {
    await insertEpisodes(
      db,
      baselines.slice(i, i + 1000).map((id) => ({
        id,
        clientId,
        name: null,
        source: 'real' as const,
        robot: null,
        policyVersion: 'v1',
        envVersion: null,
        gitSha: null,
        seed: null,
        fps: null,
        metadata: {},
        artifacts: [],
        now,
      })),
    )
  }
  const ids: string[] = []
  for (let r = 0; r < runs + WARMUP; r++) {
    const run = await createEvalRun(db, {
      id: crypto.randomUUID(),
      clientId,
      candidatePolicyVersion: 'v2',
      baselinePolicyVersion: 'v1',
      baselineEpisodeIds: baselines,
      name: null,
      metadata: {},
      minEpisodes: 10,
      maxOodActionShare: 0.25,
      now,
    })
    await fillResults(db, run.eval_run_id)
    ids.push(run.eval_run_id)
  }
  const selectMs: number[] = []
  const finalizeMs: number[] = []
  for (const run of ids.splice(0, WARMUP)) {
    await sql`select baseline_episode_id, status, error, metrics, replay_episode_id, updated_at from eval_results where eval_run_id = ${run} order by position`
      .execute(db)
    await finalizeEvalRun(db, clientId, run, new Date())
  }
  for (const run of ids) {
    for (let i = 0; i < 3; i++) {
      const t = performance.now()
      await sql`select baseline_episode_id, status, error, metrics, replay_episode_id, updated_at from eval_results where eval_run_id = ${run} order by position`
        .execute(db)
      selectMs.push(performance.now() - t)
    }
    const t = performance.now()
    await finalizeEvalRun(db, clientId, run, new Date())
    finalizeMs.push(performance.now() - t)
  }
  return { rows, finalizeMs: median(finalizeMs), selectMs: median(selectMs), ratio: median(finalizeMs) / median(selectMs) }
}

export async function main() {
  const temp = await tempDatabase()
  const db = await openDatabase({ url: temp.url, max: 4 })
  try {
    const client = await createClient({ db, sha256: NodeSha256 }, 'bench')
    const results = []
    for (const rows of SIZES) results.push(await measure(db, client.id, rows, rows >= 10_000 ? Math.min(RUNS, 3) : RUNS))
    console.log(`\nbench/rollup: finalize with statistics vs a plain SELECT of the rows, medians (${RUNS} runs; 3 at 10,000 rows)`)
    console.log('| result rows | finalize ms | plain SELECT ms | ratio |')
    console.log('|---:|---:|---:|---:|')
    for (const r of results) {
      console.log(`| ${fmt(r.rows)} | ${fmt(r.finalizeMs, 2)} | ${fmt(r.selectMs, 2)} | ${fmt(r.ratio, 2)}x${r.rows === 1000 ? ' (target < 3)' : ''} |`)
    }
    return results
  } finally {
    await db.destroy()
    await temp.drop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
