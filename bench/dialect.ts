/**
 * bench/dialect: the same INSERT through raw postgres.js tagged queries (the
 * reference), through this project's Kysely driver (src/db/postgres-js.ts)
 * and through kysely-postgres-js's stock dialect, 10 in flight, same database,
 * same run. Why the project ships its own small driver.
 */
import { Kysely } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { migrateToLatest } from '../src/db/migrate.ts'
import { POSTGRES_JS_TYPES, postgresJsDialect } from '../src/db/postgres-js.ts'
import type { Database } from '../src/db/schema.ts'
import { fmt, load, median, tempDatabase } from './lib.ts'

const IN_FLIGHT = 10
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

export async function main() {
  const temp = await tempDatabase()
  const pool = () => postgres(temp.url, { max: IN_FLIGHT, onnotice: () => {}, types: POSTGRES_JS_TYPES })
  const raw = pool()
  const ours = new Kysely<Database>({ dialect: postgresJsDialect(pool()) })
  const stock = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: pool() }) })
  try {
    await migrateToLatest(ours)
    await raw`insert into clients (id, name, created_at) values ('c', 'bench', now())`
    const row = () => ({
      id: crypto.randomUUID(),
      client_id: 'c',
      source: 'real' as const,
      status: 'recording' as const,
      metadata: '{"task":"pick"}',
      artifacts: ['actions'],
      created_at: new Date(),
      updated_at: new Date(),
    })
    const paths: Record<string, () => Promise<void>> = {
      'raw postgres.js (reference)': async () => {
        const r = row()
        await raw`insert into episodes (id, client_id, source, status, metadata, artifacts, created_at, updated_at) values (${r.id}, ${r.client_id}, ${r.source}, ${r.status}, ${r.metadata}::jsonb, ${r.artifacts}, ${r.created_at}, ${r.updated_at})`
      },
      'Kysely + src/db/postgres-js.ts': async () => void (await ours.insertInto('episodes').values(row()).execute()),
      'Kysely + kysely-postgres-js': async () => void (await stock.insertInto('episodes').values(row()).execute()),
    }
    const rates: Record<string, number[]> = {}
    for (const op of Object.values(paths)) await load(IN_FLIGHT, 0.5, op)
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, op] of Object.entries(paths)) (rates[name] ??= []).push((await load(IN_FLIGHT, SECONDS, op)).perSecond)
    }
    const reference = median(rates['raw postgres.js (reference)']!)
    console.log(`\nbench/dialect: INSERT, ${IN_FLIGHT} in flight, ${ROUNDS} rounds of ${SECONDS}s, medians`)
    console.log('| path | inserts/s | vs raw |')
    console.log('|---|---:|---:|')
    for (const name of Object.keys(paths)) console.log(`| ${name} | ${fmt(median(rates[name]!))} | ${fmt(median(rates[name]!) / reference, 2)} |`)
  } finally {
    await raw.end()
    await ours.destroy()
    await stock.destroy()
    await temp.drop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
