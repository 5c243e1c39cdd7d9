/**
 * bench/runtimes: the open (3 signed URLs) + finalize load of bench/ingest.ts
 * against the same service on Node, Bun and Deno in one run, all three on one
 * PostgreSQL database. Each runtime serves with its own adapter
 * (bench/ingest-server.ts on Node; examples/bun and examples/deno, the binaries
 * from npm); rounds alternate between runtimes so drift hits all alike.
 * Prints requests/s per runtime (two per pair) and the ratio to Node. As in
 * bench/ingest, each phase starts with BENCH_WARM_SECONDS (default 1) of the
 * same load, not counted: a server's first second after idling while the
 * others ran is slow on this machine.
 *
 *   npx tsx bench/runtimes.ts   (BENCH_SECONDS=5 BENCH_ROUNDS=3 BENCH_WARM_SECONDS=1)
 */
import { join, resolve } from 'node:path'
import { HttpPool } from './http-client.ts'
import { benchTenant, episodicPair, fmt, load, type LoadResult, median, settleDatabase, startServer } from './lib.ts'

const CONCURRENCY = 50
const ROOT = resolve(import.meta.dirname, '..')
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name)

const RUNTIMES: { name: string; script: string; command?: string[] }[] = [
  { name: 'Node', script: 'bench/ingest-server.ts' },
  { name: 'Bun', script: 'examples/bun/server.ts', command: [bin('bun')] },
  { name: 'Deno', script: 'examples/deno/server.ts', command: [bin('deno'), 'run', '-A'] },
]

export async function main(
  seconds = Number(process.env.BENCH_SECONDS ?? 5),
  rounds = Number(process.env.BENCH_ROUNDS ?? 3),
  warmSeconds = Number(process.env.BENCH_WARM_SECONDS ?? 1),
) {
  const tenant = await benchTenant()
  const env = { DATABASE_URL: tenant.databaseUrl, EPISODIC_DATA_DIR: tenant.dataDir, PORT: '0', HOST: '127.0.0.1' }
  const servers = await Promise.all(RUNTIMES.map((r) => startServer(join(ROOT, r.script), env, r.command)))
  const pools = servers.map((server) => new HttpPool(server.url))
  const pairs = pools.map((pool) => episodicPair(pool, tenant.key))

  try {
    for (const pair of pairs) await load(CONCURRENCY, 1, pair) // warm up
    const results: LoadResult[][] = RUNTIMES.map(() => [])
    for (let round = 0; round < rounds; round++) {
      for (const [i, pair] of pairs.entries()) {
        await settleDatabase(tenant.databaseUrl)
        if (warmSeconds > 0) await load(CONCURRENCY, warmSeconds, pair)
        results[i]!.push(await load(CONCURRENCY, seconds, pair))
      }
    }
    const rows = RUNTIMES.map((r, i) => ({
      name: r.name,
      requests: 2 * median(results[i]!.map((x) => x.perSecond)),
      p50: median(results[i]!.map((x) => x.p50)),
      p99: median(results[i]!.map((x) => x.p99)),
    }))
    const node = rows[0]!.requests
    console.log(
      `\nbench/runtimes: open + finalize, ${CONCURRENCY} concurrent clients, ${rounds} rounds of ${seconds}s per runtime after ${warmSeconds}s of warm-up, medians`,
    )
    console.log('| runtime | requests/s | pair p50 ms | pair p99 ms | vs Node |')
    console.log('|---|---:|---:|---:|---:|')
    for (const row of rows) console.log(`| ${row.name} | ${fmt(row.requests)} | ${fmt(row.p50, 2)} | ${fmt(row.p99, 2)} | ${fmt(row.requests / node, 2)} |`)
    return Object.fromEntries(rows.map((row) => [row.name, { requestsPerSecond: row.requests, ratioToNode: row.requests / node }]))
  } finally {
    for (const pool of pools) pool.close()
    for (const server of servers) server.child.kill()
    await tenant.cleanup()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
