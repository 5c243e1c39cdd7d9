/**
 * bench/ingest: open (3 signed URLs) + finalize over HTTP against the real
 * PostgreSQL with 50 concurrent clients, next to raw postgres.js doing the
 * same INSERT and UPDATE on the same database in the same run, and next to
 * the floor: a bare Hono handler doing that raw SQL over HTTP (no auth,
 * validation or signing), which shows what HTTP itself costs on this machine.
 * The same service on Bun (examples/bun) gets a row too when bun is installed.
 *
 * The targets: pairs at >= 0.80x raw SQL's pair rate, and a request p99 no
 * worse than raw SQL's own statement p99, both in the same run (ratios within
 * the run, since this shared machine's speed moves from minute to minute).
 * Pair p99 is printed too, with raw SQL's own beside it. The last line
 * measures the machine against the first issue's yardstick (raw postgres.js
 * INSERT, 10 in flight, ~7,500/s where the targets were first set). Where
 * /proc is there, each row also shows the CPU time its server process and
 * PostgreSQL spent per request: the work each path does, beside how fast the
 * machine happened to run it.
 *
 * Each path sits idle for ~25 s while the others run, and its first second
 * back is slow on this machine (server and PostgreSQL alike spent ~1.3x their
 * CPU per request in it; the server's young generation has also shrunk), so
 * that one second would decide a 5-second phase's p99. Every phase therefore
 * starts with BENCH_WARM_SECONDS (default 1) of the same load, timed apart:
 * the table's figures are the steady state that follows, and the "first
 * second" column shows the cold one for every path.
 *
 *   npx tsx bench/ingest.ts   (BENCH_SECONDS=5 BENCH_ROUNDS=3 BENCH_WARM_SECONDS=1)
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import postgres from 'postgres'
import { type CpuPerRequest, measureCpu } from './cpu.ts'
import { HttpPool } from './http-client.ts'
import { benchTenant, episodicPair, fmt, load, type LoadResult, median, settleDatabase, startServer, step } from './lib.ts'

const CONCURRENCY = 50
/** The issue's "for scale" figure: raw postgres.js INSERT with 10 in flight, synchronous commit. */
const INSERT_IN_FLIGHT = 10
const ISSUE_INSERT_RATE = 7_500
const ROOT = resolve(import.meta.dirname, '..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')

export async function main(
  seconds = Number(process.env.BENCH_SECONDS ?? 5),
  rounds = Number(process.env.BENCH_ROUNDS ?? 3),
  warmSeconds = Number(process.env.BENCH_WARM_SECONDS ?? 1),
) {
  const tenant = await benchTenant()
  const { key, clientId } = tenant
  const env = { DATABASE_URL: tenant.databaseUrl, EPISODIC_DATA_DIR: tenant.dataDir, PORT: '0', HOST: '127.0.0.1' }
  const server = await startServer('bench/ingest-server.ts', env)
  // The same service on Bun (examples/bun, the deployable example server), when the npm binary is there.
  const bunServer = existsSync(BUN) ? await startServer(join(ROOT, 'examples/bun/server.ts'), env, [BUN]) : undefined
  const floorServer = await startServer('bench/ingest-floor-server.ts', { DATABASE_URL: tenant.databaseUrl, BENCH_CLIENT_ID: clientId })
  const sql = postgres(tenant.databaseUrl, { max: 10, onnotice: () => {} })
  const episodic = new HttpPool(server.url)
  const floor = new HttpPool(floorServer.url)
  const httpPair = episodicPair(episodic, key)
  const bun = bunServer && new HttpPool(bunServer.url)
  const bunPair = bun && episodicPair(bun, key)
  const floorPair = episodicPair(floor, key, { open: '/open', finalize: (id) => `/finalize/${id}` })
  // The same prepared INSERT and UPDATE on either pool (tagged queries are prepared too).
  const insertOn = (pool: postgres.Sql, id: string, now: Date) =>
    pool.unsafe(
      `insert into episodes (id, client_id, name, source, robot, policy_version, metadata, status, artifacts, created_at, updated_at)
      values ($1, $2, 'bench', 'real', 'arm', 'v1', $3::jsonb, 'recording', $4, $5, $5)`,
      [id, clientId, '{"task":"pick"}', ['video', 'sensors', 'actions'], now],
      { prepare: true },
    )
  const rawPairOn = (pool: postgres.Sql) => async () => {
    const id = crypto.randomUUID()
    const now = new Date()
    await step('open', insertOn(pool, id, now))
    await step(
      'finalize',
      pool.unsafe(
        `update episodes set status = 'ready', duration_s = 12.5, bytes_total = 1000,
      metadata = coalesce(metadata, '{}'::jsonb) || $1::jsonb, updated_at = $2
      where id = $3 and client_id = $4 and status <> 'archived'`,
        ['{"done":true}', now, id, clientId],
        { prepare: true },
      ),
    )
  }
  const rawPair = rawPairOn(sql)
  // The issue's yardstick for this machine ("raw postgres.js INSERT about
  // 7.5k/s with 10 in flight"): the targets were set where that held, and an
  // absolute p99 moves with the machine, so the run says how fast this one is.
  const rawInsert = async () => void (await insertOn(sql, crypto.randomUUID(), new Date()))

  try {
    await load(CONCURRENCY, 1, httpPair) // warm up both paths
    await load(CONCURRENCY, 1, rawPair)
    await load(CONCURRENCY, 1, floorPair)
    if (bunPair) await load(CONCURRENCY, 1, bunPair)
    await load(INSERT_IN_FLIGHT, 1, rawInsert)
    type Phase = 'http' | 'bun' | 'raw' | 'floor' | 'insert'
    type Run = LoadResult & { cpu: CpuPerRequest; cold?: LoadResult }
    const runs: Record<Phase, Run[]> = { http: [], bun: [], raw: [], floor: [], insert: [] }
    // The process serving each HTTP phase (raw SQL phases have none: this process is their client).
    const serverPid: Partial<Record<Phase, number>> = { http: server.child.pid, bun: bunServer?.child.pid, floor: floorServer.child.pid }
    // Each phase starts from a settled database (see settleDatabase), and the
    // order rotates per round: without that, the phase right after raw SQL paid
    // for its writes (episodic measured 450-740 pairs/s there, 1,250-1,550 alone).
    const phases = [['raw', rawPair], ['http', httpPair], ['floor', floorPair], ['insert', rawInsert], ...(bunPair ? [['bun', bunPair] as const] : [])] as const
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < phases.length; k++) {
        const [name, op] = phases[(round + k) % phases.length]!
        const clients = name === 'insert' ? INSERT_IN_FLIGHT : CONCURRENCY
        await settleDatabase(tenant.databaseUrl)
        const cold = warmSeconds > 0 ? await load(clients, warmSeconds, op) : undefined
        const { result, cpu } = await measureCpu(serverPid[name], () => load(clients, seconds, op), (r) => r.requests.perSecond * r.seconds)
        runs[name].push({ ...result, cpu, cold })
      }
    }
    const medianOf = (values: (number | undefined)[]) => (values.every((x) => x !== undefined) ? median(values as number[]) : undefined)
    const summarize = (list: Run[]) => ({
      rate: median(list.map((x) => x.perSecond)),
      requests: median(list.map((x) => x.requests.perSecond)),
      p50: median(list.map((x) => x.requests.p50)),
      p99: median(list.map((x) => x.requests.p99)),
      open: median(list.map((x) => x.steps.open!)),
      finalize: median(list.map((x) => x.steps.finalize!)),
      pair: median(list.map((x) => x.p99)),
      serverCpu: medianOf(list.map((x) => x.cpu.server)),
      mainCpu: medianOf(list.map((x) => x.cpu.main)),
      postgresCpu: medianOf(list.map((x) => x.cpu.postgres)),
      coldP99: medianOf(list.map((x) => x.cold?.requests.p99)),
    })
    const h = summarize(runs.http)
    const r = summarize(runs.raw)
    const f = summarize(runs.floor)
    const insertRate = median(runs.insert.map((x) => x.perSecond))
    const micros = (value: number | undefined) => (value === undefined ? '-' : fmt(value))
    const millis = (value: number | undefined) => (value === undefined ? '-' : fmt(value, 1))
    const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '-' : fmt(a / b, 2))
    const row = (name: string, x: typeof h) =>
      `| ${name} | ${fmt(x.rate)} | ${fmt(x.requests)} | ${fmt(x.p50, 1)} | ${fmt(x.p99, 1)} | ${fmt(x.open, 1)} | ${fmt(x.finalize, 1)} | ${
        fmt(x.pair, 1)
      } | ${micros(x.serverCpu)} (${micros(x.mainCpu)}) | ${micros(x.postgresCpu)} | ${millis(x.coldP99)} | ${fmt(x.rate / r.rate, 2)} |`
    console.log(
      `\nbench/ingest: ${CONCURRENCY} concurrent clients, ${rounds} rounds of ${seconds}s after ${warmSeconds}s of warm-up, medians; a request is one HTTP request (raw SQL: one statement)`,
    )
    console.log(
      '| path | pairs/s | requests/s | request p50 ms | request p99 ms | open (INSERT) p99 ms | finalize (UPDATE) p99 ms | pair p99 ms | server CPU µs/request (main thread) | PostgreSQL CPU µs/request | first second after idle: request p99 ms | pairs vs raw SQL |',
    )
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    console.log(row('episodic: HTTP open (3 URLs) + finalize', h))
    if (bunPair) console.log(row('episodic on Bun (examples/bun): same pair', summarize(runs.bun)))
    console.log(row('floor: bare Hono + raw SQL over HTTP', f))
    console.log(row('raw postgres.js INSERT + UPDATE (max: 10)', r))
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met')
    console.log(
      `pairs: episodic/raw ${fmt(h.rate / r.rate, 2)} (target >= 0.80: ${met(h.rate / r.rate >= 0.8)}; vs floor ${fmt(h.rate / f.rate, 2)})\n` +
        `latency: request p99 ${fmt(h.p99, 1)} ms (target <= raw SQL's own statement p99 ${fmt(r.p99, 1)} ms: ${met(h.p99 <= r.p99)}; open ${
          fmt(h.open, 1)
        } ms, finalize ${fmt(h.finalize, 1)} ms; ` +
        `the first second after ~25 s idle, before it: ${millis(h.coldP99)} ms, the floor's ${millis(f.coldP99)} ms); ` +
        `pair p99 ${fmt(h.pair, 1)} ms (raw SQL's own ${fmt(r.pair, 1)} ms)\n` +
        `machine: raw postgres.js INSERT, ${INSERT_IN_FLIGHT} in flight, ${fmt(insertRate)}/s = ${fmt(insertRate / ISSUE_INSERT_RATE, 2)}x the ~${
          fmt(ISSUE_INSERT_RATE)
        }/s the issue measured when it set the targets ` +
        `(the floor, with no app work, had a request p99 of ${fmt(f.p99, 1)} ms in this run)`,
    )
    if (h.serverCpu !== undefined && f.serverCpu !== undefined) {
      console.log(
        `cpu per request: episodic's server ${micros(h.serverCpu)} µs = ${ratio(h.serverCpu, f.serverCpu)}x the floor's ${micros(f.serverCpu)} µs ` +
          `(main thread ${micros(h.mainCpu)} µs = ${ratio(h.mainCpu, f.mainCpu)}x the floor's ${micros(f.mainCpu)} µs); ` +
          `PostgreSQL ${micros(h.postgresCpu)} µs under episodic = ${ratio(h.postgresCpu, r.postgresCpu)}x raw SQL's ${micros(r.postgresCpu)} µs a statement`,
      )
    }
    return { http: h, raw: r, floor: f, ratio: h.rate / r.rate, insertRate }
  } finally {
    episodic.close()
    floor.close()
    bun?.close()
    bunServer?.child.kill()
    server.child.kill()
    floorServer.child.kill()
    await sql.end()
    await tenant.cleanup()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
