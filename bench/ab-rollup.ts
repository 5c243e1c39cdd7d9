/**
 * bench/ab-rollup: an interleaved A/B of finalize between checkouts, in one
 * process on one database. Each round fills fresh runs of 1,000 result rows
 * (as bench/rollup does), then finalizes them alternately with each
 * checkout's `finalizeEvalRun`, each after three plain SELECTs of the same
 * rows; it prints per round each side's median finalize, its ratio to the
 * round's median SELECT (both sides' SELECTs: the same work) and the CPU
 * time per finalize (this process plus the database backend,
 * from /proc), then the medians and the median of per-round ratios against A.
 * Separate processes (bench/rollup run by turns) drift with this shared
 * machine by more than the change being measured; calls taken by turns in
 * one process do not.
 *
 *   git worktree add --detach /tmp/ab-main main && ln -s "$PWD/node_modules" /tmp/ab-main/
 *   npx tsx bench/ab-rollup.ts /tmp/ab-main .     (BENCH_ROUNDS=6 BENCH_PER_ROUND=8 BENCH_ROLLUP_ROWS=1000)
 */
import { resolve } from 'node:path'
import { sql } from 'kysely'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { createClient } from '../src/admin/admin.ts'
import { openDatabase } from '../src/db/open.ts'
import { insertEpisodes } from '../src/episodes/rows.ts'
import { createEvalRun, type finalizeEvalRun } from '../src/eval/runs.ts'
import { processCpuMicros } from './cpu.ts'
import { fmt, median, tempDatabase } from './lib.ts'
import { fillResults } from './rollup.ts'

type Finalize = typeof finalizeEvalRun

export async function main(dirs = process.argv.slice(2)) {
  if (dirs.length !== 2) throw new Error('usage: npx tsx bench/ab-rollup.ts <checkout A> <checkout B>')
  const rows = Number(process.env.BENCH_ROLLUP_ROWS ?? 1000)
  const rounds = Number(process.env.BENCH_ROUNDS ?? 6)
  const per = Number(process.env.BENCH_PER_ROUND ?? 8)
  const finalize: Finalize[] = []
  for (const dir of dirs) finalize.push((await import(resolve(dir, 'src/eval/runs.ts'))).finalizeEvalRun)
  const temp = await tempDatabase()
  // One connection, so one backend does all the database work and /proc can time it.
  const db = await openDatabase({ url: temp.url, max: 1 })
  try {
    const clientId = (await createClient({ db, sha256: NodeSha256 }, 'bench')).id
    const now = new Date()
    const baselines = Array.from({ length: rows }, () => crypto.randomUUID())
    for (let i = 0; i < rows; i += 1000) {
      const ids = baselines.slice(i, i + 1000)
      const episode = { clientId, name: null, source: 'real' as const, robot: null, policyVersion: 'v1', envVersion: null, gitSha: null, seed: null, fps: null }
      await insertEpisodes(db, ids.map((id) => ({ ...episode, id, metadata: {}, artifacts: [], now })))
    }
    const newRun = async () => {
      const id = crypto.randomUUID()
      const run = { id, clientId, candidatePolicyVersion: 'v2', baselinePolicyVersion: 'v1', name: null, metadata: {} }
      await createEvalRun(db, { ...run, baselineEpisodeIds: baselines, minEpisodes: 10, maxOodActionShare: 0.25, now })
      await fillResults(db, id)
      return id
    }
    const select = (run: string) =>
      sql`select baseline_episode_id, status, error, metrics, replay_episode_id, updated_at from eval_results where eval_run_id = ${run} order by position`
        .execute(db)
    const backend = Number((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid)
    const cpu = () => {
      const own = process.cpuUsage()
      return own.user + own.system + (processCpuMicros(backend) ?? NaN)
    }
    for (const f of finalize) {
      for (let w = 0; w < 2; w++) {
        const run = await newRun()
        await select(run)
        await f(db, clientId, run, new Date())
      }
    }
    const ratios: number[][] = [[], []]
    const cpuMs: number[][] = [[], []]
    const perRound: number[] = []
    for (let round = 0; round < rounds; round++) {
      const runs = [[], []] as string[][]
      for (let i = 0; i < per; i++) for (const s of [0, 1]) runs[s]!.push(await newRun())
      const fin = [[], []] as number[][], sel: number[] = [], used = [0, 0]
      for (let i = 0; i < per; i++) {
        for (const s of (i + round) % 2 ? [1, 0] : [0, 1]) {
          const run = runs[s]![i]!
          for (let k = 0; k < 3; k++) {
            const t = performance.now()
            await select(run)
            sel.push(performance.now() - t)
          }
          const c = cpu()
          const t = performance.now()
          await finalize[s]!(db, clientId, run, new Date())
          fin[s]!.push(performance.now() - t)
          used[s]! += cpu() - c
        }
      }
      const line = [0, 1].map((s) => {
        ratios[s]!.push(median(fin[s]!) / median(sel))
        cpuMs[s]!.push(used[s]! / per / 1000)
        return `${'AB'[s]} finalize ${fmt(median(fin[s]!), 2)} ms, ratio ${fmt(ratios[s]!.at(-1)!, 2)}x, finalize CPU ${fmt(cpuMs[s]!.at(-1)!, 1)} ms`
      })
      perRound.push(ratios[1]!.at(-1)! / ratios[0]!.at(-1)!)
      console.log(`round ${round + 1}: SELECT ${fmt(median(sel), 2)} ms | ${line.join(' | ')}`)
    }
    console.log(`\nbench/ab-rollup, ${rows} rows, ${rounds} rounds of ${per} finalizes a side (medians):`)
    for (const s of [0, 1]) console.log(`${'AB'[s]} ${dirs[s]}: finalize/SELECT ${fmt(median(ratios[s]!), 2)}x, finalize CPU ${fmt(median(cpuMs[s]!), 1)} ms`)
    console.log(`B against A: per-round ratio ${fmt(median(perRound), 3)}, CPU ${fmt(median(cpuMs[1]!) / median(cpuMs[0]!), 3)}`)
  } finally {
    await db.destroy()
    await temp.drop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
