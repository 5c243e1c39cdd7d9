/**
 * bench/ab: an interleaved A/B of the ingest pair between checkouts of this
 * repository, the way docs/performance.md's figures were taken. Each
 * checkout's `bench/ingest-server.ts` serves the same throwaway database; the
 * phases alternate strictly (A, B, A, B, ...; the order rotates per round),
 * each after a settled database and a one-second warm-up, so every side sees
 * the same drift of this shared machine. Prints every phase, then the
 * medians and each side against A: the ratio of medians, and the median of
 * per-round ratios (which cancels drift between rounds). CPU µs per request
 * of each server process (from /proc) moves far less with the machine than
 * rates do.
 *
 *   npx tsx bench/ab.ts <checkout A> <checkout B> [more...]   (BENCH_SECONDS=5 BENCH_ROUNDS=6)
 *   git worktree add --detach /tmp/ab-main main && npx tsx bench/ab.ts /tmp/ab-main .
 */
import { resolve } from 'node:path'
import { measureCpu } from './cpu.ts'
import { HttpPool } from './http-client.ts'
import { benchTenant, episodicPair, fmt, load, type LoadResult, median, settleDatabase, startServer } from './lib.ts'

const CONCURRENCY = 50

type Phase = LoadResult & { cpu?: number }

export async function main(dirs = process.argv.slice(2), seconds = Number(process.env.BENCH_SECONDS ?? 5), rounds = Number(process.env.BENCH_ROUNDS ?? 6)) {
  if (dirs.length < 2) throw new Error('usage: npx tsx bench/ab.ts <checkout A> <checkout B> [more...]')
  const names = dirs.map((dir, i) => `${String.fromCharCode(65 + i)} ${dir}`)
  const tenant = await benchTenant()
  const env = { DATABASE_URL: tenant.databaseUrl, EPISODIC_DATA_DIR: tenant.dataDir, PORT: '0', HOST: '127.0.0.1' }
  const servers = await Promise.all(dirs.map((dir) => startServer(resolve(dir, 'bench/ingest-server.ts'), env)))
  const pools = servers.map((server) => new HttpPool(server.url))
  const pairs = pools.map((pool) => episodicPair(pool, tenant.key))
  const results: Phase[][] = dirs.map(() => [])
  try {
    for (const pair of pairs) await load(CONCURRENCY, 1, pair)
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < dirs.length; k++) {
        const side = (round + k) % dirs.length
        await settleDatabase(tenant.databaseUrl)
        await load(CONCURRENCY, 1, pairs[side]!)
        const { result, cpu } = await measureCpu(
          servers[side]!.child.pid,
          () => load(CONCURRENCY, seconds, pairs[side]!),
          (r) => r.requests.perSecond * r.seconds,
        )
        results[side]!.push({ ...result, cpu: cpu.server })
        console.log(
          `round ${round + 1} ${names[side]}: ${fmt(result.perSecond)} pairs/s, request p50 ${fmt(result.requests.p50, 1)} ms, p99 ${
            fmt(result.requests.p99, 1)
          } ms, server CPU ${cpu.server === undefined ? '-' : fmt(cpu.server)} µs/request`,
        )
      }
    }
    const pick = {
      pairs: (x: Phase) => x.perSecond,
      p50: (x: Phase) => x.requests.p50,
      p99: (x: Phase) => x.requests.p99,
      cpu: (x: Phase) => x.cpu ?? NaN,
    }
    const medians = results.map((list) =>
      Object.fromEntries(Object.entries(pick).map(([k, f]) => [k, median(list.map(f))])) as Record<keyof typeof pick, number>
    )
    const paired = (side: number, f: (x: Phase) => number) => median(results[side]!.map((x, i) => f(x) / f(results[0]![i]!)))
    console.log(
      `\n| side | pairs/s | request p50 ms | request p99 ms | server CPU µs/request | vs A: pairs/s, p99, CPU (ratio of medians; median of per-round ratios) |\n|---|---:|---:|---:|---:|---|`,
    )
    medians.forEach((m, side) => {
      const vs = side === 0
        ? ''
        : (['pairs', 'p99', 'cpu'] as const).map((k) => `${fmt(m[k] / medians[0]![k], 2)} (${fmt(paired(side, pick[k]), 2)})`).join(', ')
      console.log(`| ${names[side]} | ${fmt(m.pairs)} | ${fmt(m.p50, 1)} | ${fmt(m.p99, 1)} | ${fmt(m.cpu)} | ${vs} |`)
    })
    return medians
  } finally {
    for (const pool of pools) pool.close()
    for (const server of servers) server.child.kill()
    await tenant.cleanup()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
