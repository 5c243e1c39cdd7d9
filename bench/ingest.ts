/**
 * bench/ingest: open (3 signed URLs) + finalize over HTTP against the real
 * PostgreSQL with 50 concurrent clients, next to raw postgres.js doing the
 * same INSERT and UPDATE on the same database in the same run.
 *
 *   npx tsx bench/ingest.ts   (BENCH_SECONDS=5 BENCH_ROUNDS=3)
 */
import { Agent } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { createClient, createKey } from '../src/admin/admin.ts'
import { openDatabase } from '../src/db/open.ts'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { fmt, load, median, postJson as post, startServer, tempDatabase, type LoadResult } from './lib.ts'

const CONCURRENCY = 50

export async function main(seconds = Number(process.env.BENCH_SECONDS ?? 5), rounds = Number(process.env.BENCH_ROUNDS ?? 3)) {
  const temp = await tempDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'episodic-bench-'))
  const db = await openDatabase({ url: temp.url, max: 2 })
  await createClient({ db, sha256: NodeSha256 }, 'bench')
  const { key } = await createKey({ db, sha256: NodeSha256 }, 'bench')
  const clientId = (await db.selectFrom('clients').select('id').executeTakeFirstOrThrow()).id
  await db.destroy()

  const server = await startServer('bench/ingest-server.ts', { DATABASE_URL: temp.url, EPISODIC_DATA_DIR: dataDir, PORT: '0' })
  const sql = postgres(temp.url, { max: 10, onnotice: () => {} })
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const openUrl = new URL('/api/ingest/episode', server.url)

  const httpPair = async () => {
    const opened = await post(agent, openUrl, key, '{"name":"bench","robot":"arm","policy_version":"v1","metadata":{"task":"pick"}}')
    await post(agent, new URL(`/api/ingest/episode/${opened.episode_id}/finalize`, server.url), key, '{"duration_s":12.5,"bytes_total":1000,"metadata":{"done":true}}')
  }
  const rawPair = async () => {
    const id = crypto.randomUUID()
    const now = new Date()
    await sql`insert into episodes (id, client_id, name, source, robot, policy_version, metadata, status, artifacts, created_at, updated_at)
      values (${id}, ${clientId}, 'bench', 'real', 'arm', 'v1', ${'{"task":"pick"}'}::jsonb, 'recording', ${['video', 'sensors', 'actions']}, ${now}, ${now})`
    await sql`update episodes set status = 'ready', duration_s = 12.5, bytes_total = 1000,
      metadata = coalesce(metadata, '{}'::jsonb) || ${'{"done":true}'}::jsonb, updated_at = ${now}
      where id = ${id} and client_id = ${clientId} and status <> 'archived'`
  }

  try {
    await load(CONCURRENCY, 1, httpPair) // warm up both paths
    await load(CONCURRENCY, 1, rawPair)
    const http: LoadResult[] = []
    const raw: LoadResult[] = []
    for (let round = 0; round < rounds; round++) {
      raw.push(await load(CONCURRENCY, seconds, rawPair))
      http.push(await load(CONCURRENCY, seconds, httpPair))
    }
    const h = { rate: median(http.map((r) => r.perSecond)), p50: median(http.map((r) => r.p50)), p99: median(http.map((r) => r.p99)) }
    const r = { rate: median(raw.map((x) => x.perSecond)), p50: median(raw.map((x) => x.p50)), p99: median(raw.map((x) => x.p99)) }
    console.log(`\nbench/ingest: ${CONCURRENCY} concurrent clients, ${rounds} rounds of ${seconds}s, medians`)
    console.log('| path | pairs/s | p50 ms | p99 ms |')
    console.log('|---|---:|---:|---:|')
    console.log(`| HTTP open (3 URLs) + finalize | ${fmt(h.rate)} | ${fmt(h.p50, 2)} | ${fmt(h.p99, 2)} |`)
    console.log(`| raw postgres.js INSERT + UPDATE | ${fmt(r.rate)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} |`)
    console.log(`ratio HTTP/raw: ${fmt(h.rate / r.rate, 2)} (target >= 0.60); HTTP pair p99 ${fmt(h.p99, 1)} ms (target < 25 ms)`)
    return { http: h, raw: r, ratio: h.rate / r.rate }
  } finally {
    agent.destroy()
    server.child.kill()
    await sql.end()
    await temp.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
