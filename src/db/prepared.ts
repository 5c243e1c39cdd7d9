/**
 * Hot statements compiled by Kysely once, then run with fresh parameters,
 * through Kysely's public API only (`compile()`, `executeQuery`).
 *
 * Building and compiling a query costs Kysely ~10 µs and more for a batch of
 * rows (it freezes and visits an operation tree every time), which the ingest
 * path paid for every batch of opens and finalizes. A prepared query is built
 * once per Kysely instance with stand-in values, its parameter slots are
 * mapped back to names, and each run only fills a parameter array. The SQL
 * text is byte-identical every time, so postgres.js and PGlite reuse their
 * server-side prepared statement too. Kept because it earns its place: see
 * docs/performance.md.
 *
 * @example
 * const touch = prepareQuery(['id', 'now'], (db, p) =>
 *   db.updateTable('episodes').set({ updated_at: p.now as Date }).where('id', '=', p.id as string))
 * await touch(db, { id, now: new Date() })
 */
import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely'
import type { Database } from './schema.ts'

/** A prepared statement: runs on any `Kysely<Database>` or transaction. */
export type PreparedQuery<P extends string, R> = (db: Kysely<Database>, values: Readonly<Record<P, unknown>>) => Promise<QueryResult<R>>

type Slot<P> = { name: P } | { value: unknown }

interface Compiled<P> {
  sql: string
  slots: Slot<P>[]
}

/**
 * Prepares the query `build` returns. `build` gets one stand-in per name in
 * `names`; each must be used as a value (a parameter) at least once, never as
 * an identifier or inside `sql.raw`, which the first compile checks.
 */
export function prepareQuery<P extends string, R>(
  names: readonly P[],
  build: (db: Kysely<Database>, params: Readonly<Record<P, unknown>>) => Compilable<R>,
): PreparedQuery<P, R> {
  // One compile per Kysely instance (its dialect decides the SQL).
  const compiled = new WeakMap<object, Compiled<P>>()
  return async (db, values) => {
    let c = compiled.get(db)
    if (c === undefined) {
      c = compile(db, names, build)
      compiled.set(db, c)
    }
    const parameters = c.slots.map((slot) => ('name' in slot ? values[slot.name] : slot.value))
    return await db.executeQuery<R>(CompiledQuery.raw(c.sql, parameters))
  }
}

function compile<P extends string, R>(
  db: Kysely<Database>,
  names: readonly P[],
  build: (db: Kysely<Database>, params: Readonly<Record<P, unknown>>) => Compilable<R>,
): Compiled<P> {
  const standIns = new Map<unknown, P>()
  const params = {} as Record<P, unknown>
  for (const name of names) {
    const standIn = `\u0000prepared:${name}`
    standIns.set(standIn, name)
    params[name] = standIn
  }
  const query = build(db, params).compile()
  const slots = query.parameters.map((value): Slot<P> => {
    const name = standIns.get(value)
    return name === undefined ? { value } : { name }
  })
  const used = new Set(slots.flatMap((slot) => ('name' in slot ? [slot.name] : [])))
  const missing = names.filter((name) => !used.has(name))
  if (missing.length > 0 || query.sql.includes('\u0000')) {
    throw new Error(`prepareQuery: parameter(s) ${missing.join(', ') || '(in the SQL text)'} must be passed as values`)
  }
  return { sql: query.sql, slots }
}

/** Runs a statement over rows of named fields; see `prepareRows`. */
export type PreparedRows<F extends string, R> = (db: Kysely<Database>, rows: readonly Readonly<Record<F, unknown>>[]) => Promise<QueryResult<R>>

/**
 * A statement over a number of rows of the same `fields` (a batch of inserts
 * or of changes), prepared once per row count with `prepareQuery`. Batches
 * hold at most `db/batch.ts`'s `maxBatch` rows, which bounds the counts kept.
 *
 * @example
 * const insert = prepareRows(['id', 'name'], (db, rows) => db.insertInto('clients').values(rows.map((r) => ({ id: r.id as string, name: r.name as string, created_at: new Date() }))))
 * await insert(db, [{ id: 'c1', name: 'one' }, { id: 'c2', name: 'two' }])
 */
export function prepareRows<F extends string, R>(
  fields: readonly F[],
  build: (db: Kysely<Database>, rows: Readonly<Record<F, unknown>>[]) => Compilable<R>,
): PreparedRows<F, R> {
  const bySize = new Map<number, { names: string[]; run: PreparedQuery<string, R> }>()
  return (db, rows) => {
    let statement = bySize.get(rows.length)
    if (statement === undefined) {
      const names = rows.flatMap((_, i) => fields.map((field) => `${i}.${field}`))
      const run = prepareQuery<string, R>(
        names,
        (db, p) => build(db, rows.map((_, i) => Object.fromEntries(fields.map((field) => [field, p[`${i}.${field}`]])) as Record<F, unknown>)),
      )
      bySize.set(rows.length, statement = { names, run })
    }
    const values: Record<string, unknown> = {}
    let at = 0
    for (const row of rows) for (const field of fields) values[statement.names[at++]!] = row[field]
    return statement.run(db, values)
  }
}
