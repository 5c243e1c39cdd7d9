/**
 * bench/search: metadata search over 1,000,000 episodes on PostgreSQL.
 * Each query runs three ways in the same run, on the same database:
 * through the API (`GET /api/episodes?metadata...` via `app.request`, no
 * socket), through `listEpisodes` (the query the API runs), and as the same
 * statement in plain SQL over postgres.js. p50/p99 in ms; target: the API
 * under 100 ms at p50 for every query.
 *
 *   npm run bench -- search          (BENCH_SEARCH_ROWS=1000000, BENCH_SEARCH_REPEAT=40)
 */
import postgres from 'postgres'
import { sql } from 'kysely'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { createClient, createKey } from '../src/admin/admin.ts'
import { createApp } from '../src/app.ts'
import { openDatabase } from '../src/db/open.ts'
import { listEpisodes } from '../src/episodes/list.ts'
import { splitMetadataParams } from '../src/episodes/metadata-filter.ts'
import { ListEpisodesQuery } from '../src/episodes/schemas.ts'
import { parseWith } from '../src/http/body.ts'
import { fmt, tempDatabase } from './lib.ts'

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 1_000_000)
const REPEAT = Number(process.env.BENCH_SEARCH_REPEAT ?? 40)
const TASKS = ['reach', 'push', 'pick', 'place', 'wipe', 'pour', 'stack', 'open']

/** Query strings: two common keys, a rare number (matches 5 and "5"), a unique id, a nested key over a day. */
const QUERIES = [
  'metadata.task=reach&metadata.site=lab-2',
  'metadata.seed=5',
  `metadata.run=${Math.floor(ROWS / 2) + 1}`,
  'metadata.task=reach',
  'metadata.arm.side=left&metadata.task=pick&created_after=2026-03-01&created_before=2026-03-02',
]

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

async function time(repeat: number, work: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  await work() // warm
  const ms: number[] = []
  for (let i = 0; i < repeat; i++) {
    const t = performance.now()
    await work()
    ms.push(performance.now() - t)
  }
  ms.sort((a, b) => a - b)
  return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) }
}

export async function main() {
  const temp = await tempDatabase()
  const db = await openDatabase({ url: temp.url, max: 4 })
  const raw = postgres(temp.url, { max: 1, onnotice: () => {} })
  try {
    const deps = { db, sha256: NodeSha256 }
    const client = await createClient(deps, 'bench')
    const other = await createClient(deps, 'other')
    const key = (await createKey(deps, 'bench')).key
    const t = performance.now()
    // One statement: 90% of the rows are the bench client's, spread over 2026 H1.
    await sql`
      insert into episodes (id, client_id, name, source, policy_version, metadata, status, artifacts, created_at, updated_at)
      select gen_random_uuid(), case when i % 10 = 0 then ${other.id} else ${client.id} end, null, 'real', 'v' || (i % 7),
        jsonb_build_object('task', (${TASKS}::text[])[1 + i % ${TASKS.length}], 'site', 'lab-' || ((i / 7) % 20), 'run', i,
          'seed', case when i % 2 = 0 then to_jsonb(i % 1000) else to_jsonb((i % 1000)::text) end,
          'arm', jsonb_build_object('side', case when i % 3 = 0 then 'left' else 'right' end), 'operator', 'op-' || (i % 50)),
        'ready', '{}', ts, ts
      from generate_series(1, ${ROWS}) as i, lateral (select timestamptz '2026-01-01' + (i * interval '15 seconds') as ts) as t`.execute(db)
    // VACUUM moves the bulk insert out of the GIN index's pending list, as autovacuum soon would.
    await sql`vacuum analyze episodes`.execute(db)
    console.log(`\nbench/search: ${fmt(ROWS)} episodes inserted and vacuumed in ${fmt((performance.now() - t) / 1000, 1)} s; ${REPEAT} runs per query, ms`)

    const app = createApp({ db, logger: { error: (m, e) => console.error(m, e) } })
    const rows: string[][] = [['query', 'matches', 'API p50', 'API p99', 'listEpisodes p50', 'p99', 'plain SQL p50', 'p99']]
    for (const query of QUERIES) {
      const { filters, rest } = splitMetadataParams(Object.fromEntries(new URLSearchParams(query)))
      const input = parseWith(ListEpisodesQuery, rest)
      // The same statement listEpisodes sends, as text with its parameters, over a raw connection
      // (`::text` so postgres.js sends the document as text, not as a JSON-encoded string).
      const where = [`client_id = $1`]
      const params: unknown[] = [client.id]
      if (input.created_after) where.push(`created_at >= $${params.push(input.created_after)}`)
      if (input.created_before) where.push(`created_at < $${params.push(input.created_before)}`)
      for (const f of filters) where.push(`(${f.documents.map((d) => `metadata @> cast($${params.push(d)}::text as jsonb)`).join(' or ')})`)
      const text = `select * from episodes where ${where.join(' and ')} order by created_at desc, id desc limit ${input.limit + 1}`
      const matches = (await raw.unsafe(`select count(*)::int as n from episodes where ${where.join(' and ')}`, params as any[]))[0]!.n as number

      const listed = (await listEpisodes(db, client.id, input, filters)).items.length
      const plainRows = (await raw.unsafe(text, params as any[])).length
      if (listed !== Math.min(plainRows, input.limit) || plainRows !== Math.min(matches, input.limit + 1)) {
        throw new Error(`${query}: listEpisodes gave ${listed} rows, plain SQL ${plainRows}, count ${matches}`)
      }
      const api = await time(REPEAT, async () => {
        const reply = await app.request(`/api/episodes?${query}`, { headers: { authorization: `Bearer ${key}` } })
        if (reply.status !== 200) throw new Error(`${query}: ${reply.status} ${await reply.text()}`)
        await reply.arrayBuffer()
      })
      const lib = await time(REPEAT, () => listEpisodes(db, client.id, input, filters))
      const plain = await time(REPEAT, () => raw.unsafe(text, params as any[]))
      rows.push([query, fmt(matches), fmt(api.p50, 1), fmt(api.p99, 1), fmt(lib.p50, 1), fmt(lib.p99, 1), fmt(plain.p50, 1), fmt(plain.p99, 1)])
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
    for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
  } finally {
    await raw.end()
    await db.destroy()
    await temp.drop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
