/**
 * Shared pieces of the benchmarks: a throwaway PostgreSQL database (with a
 * client and key for the ingest benches), the open+finalize pair, a
 * fixed-concurrency load loop with latency percentiles, and table printing.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import postgres from 'postgres'
import { join } from 'node:path'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { createClient, createKey } from '../src/admin/admin.ts'
import { openDatabase } from '../src/db/open.ts'
import { createTempDatabase } from '../test/helpers/postgres.ts'
import type { HttpPool } from './http-client.ts'

export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A throwaway database on the bench server (dropped by `drop()`). */
export const tempDatabase = () => createTempDatabase(BENCH_DATABASE_URL, 'episodic_bench')

export interface LoadResult {
  ops: number
  seconds: number
  perSecond: number
  p50: number
  p99: number
  /** p99 in ms of each named step an op timed with `step` (e.g. each request of a pair). */
  steps: Record<string, number>
  /**
   * All steps taken together (each request of a pair, or each statement of
   * raw SQL): how many a second and their p50/p99 in ms. Without steps, the ops.
   */
  requests: { perSecond: number; p50: number; p99: number }
}

let stepLatencies: Map<string, number[]> | undefined

/** Awaits `work`, recording its latency under `name` for the running `load`. */
export async function step<T>(name: string, work: PromiseLike<T>): Promise<T> {
  const t = performance.now()
  const result = await work
  if (stepLatencies) {
    let list = stepLatencies.get(name)
    if (!list) stepLatencies.set(name, list = [])
    list.push(performance.now() - t)
  }
  return result
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN

/** Runs `op` from `concurrency` workers for `seconds`; latencies in ms. */
export async function load(concurrency: number, seconds: number, op: () => Promise<void>): Promise<LoadResult> {
  const latencies: number[] = []
  stepLatencies = new Map()
  const end = performance.now() + seconds * 1000
  const start = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now()
        await op()
        latencies.push(performance.now() - t)
      }
    }),
  )
  const elapsed = (performance.now() - start) / 1000
  latencies.sort((a, b) => a - b)
  const steps: Record<string, number> = {}
  const all: number[] = []
  for (const [name, list] of stepLatencies) {
    steps[name] = percentile(list.sort((a, b) => a - b), 0.99)
    for (const ms of list) all.push(ms)
  }
  stepLatencies = undefined
  const each = all.length ? all.sort((a, b) => a - b) : latencies
  const requests = { perSecond: each.length / elapsed, p50: percentile(each, 0.5), p99: percentile(each, 0.99) }
  return {
    ops: latencies.length,
    seconds: elapsed,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    steps,
    requests,
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * Starts a server script in a child process and resolves with the URL it
 * prints. `command` runs the script (default: this Node with tsx).
 */
export function startServer(script: string, env: Record<string, string>, command?: string[]): Promise<{ url: string; child: ChildProcess }> {
  const extra = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  const [bin, ...args] = command ?? [process.execPath, ...extra, '--import', 'tsx']
  const child = spawn(bin!, [...args, script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d) => {
      out += d
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match) resolve({ url: match[1]!, child })
    })
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)))
  })
}

/**
 * Vacuums the episodes table and checkpoints, so a load phase does not pay for
 * the writes of the phase before it (measured: the phase right after a
 * write-heavy one ran at about half its rate, its server waiting on PostgreSQL).
 */
export async function settleDatabase(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    await sql`vacuum episodes`
    await sql`checkpoint`
  } finally {
    await sql.end()
  }
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** What an ingest bench needs: a throwaway database with one client and key, and a data folder. */
export interface BenchTenant {
  databaseUrl: string
  dataDir: string
  clientId: string
  key: string
  cleanup(): Promise<void>
}

export async function benchTenant(): Promise<BenchTenant> {
  const temp = await tempDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'episodic-bench-'))
  const db = await openDatabase({ url: temp.url, max: 2 })
  const client = await createClient({ db, sha256: NodeSha256 }, 'bench')
  const { key } = await createKey({ db, sha256: NodeSha256 }, 'bench')
  await db.destroy()
  return {
    databaseUrl: temp.url,
    dataDir,
    clientId: client.id,
    key,
    async cleanup() {
      await temp.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Where a pair's two requests go: the service's routes, or another server's (bench/ingest's floor). */
export interface PairRoutes {
  open: string
  finalize(episodeId: string): string
}

const EPISODIC_ROUTES: PairRoutes = { open: '/api/ingest/episode', finalize: (id) => `/api/ingest/episode/${id}/finalize` }

/** One open (3 signed URLs) + finalize against the episodic server `pool` talks to. */
export function episodicPair(pool: HttpPool, key: string, routes: PairRoutes = EPISODIC_ROUTES): () => Promise<void> {
  return async () => {
    const opened = await step('open', pool.postJson(routes.open, key, '{"name":"bench","robot":"arm","policy_version":"v1","metadata":{"task":"pick"}}'))
    await step('finalize', pool.postJson(routes.finalize(opened.episode_id), key, '{"duration_s":12.5,"bytes_total":1000,"metadata":{"done":true}}'))
  }
}
