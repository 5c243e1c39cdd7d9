import { describe, expect, it } from 'vitest'
import type { PostgresJsReserved, PostgresJsResult, PostgresJsSql } from './postgres-js.ts'
import { stripedSql } from './stripes.ts'

/** A stand-in single-connection instance: records queries and settles them on demand. */
class FakeSql implements PostgresJsSql {
  static made: FakeSql[] = []
  readonly queries: Array<{ query: string; resolve(rows: PostgresJsResult): void; reject(error: Error): void }> = []
  reservations = 0
  ended = false
  readonly id = FakeSql.made.length

  constructor() {
    FakeSql.made.push(this)
  }

  unsafe(query: string) {
    const promise = new Promise<PostgresJsResult>((resolve, reject) => this.queries.push({ query, resolve, reject }))
    return Object.assign(promise, {
      cursor: async function* () {
        yield [{ row: 1 }]
        yield [{ row: 2 }]
      },
    })
  }

  async reserve(): Promise<PostgresJsReserved> {
    this.reservations++
    return { unsafe: (query) => this.unsafe(query), release: () => void this.reservations-- }
  }

  async end() {
    this.ended = true
  }

  settle(index = 0, rows: unknown[] = []) {
    this.queries.splice(index, 1)[0]!.resolve(Object.assign(rows, { count: rows.length }))
  }
}

function pool(max: number) {
  FakeSql.made = []
  return stripedSql(() => new FakeSql(), max)
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

/**
 * Sends `query` now: postgres.js queries (and the pool's choice of stripe) run
 * when `then` is called, which `await` or `Promise.resolve` only do a tick later.
 */
const send = (sql: PostgresJsSql, query: string) => sql.unsafe(query).then((rows) => rows)

describe('stripedSql', () => {
  it('opens nothing until a query is sent, and reuses an idle stripe', async () => {
    const sql = pool(4)
    const built = sql.unsafe('select 1')
    expect(FakeSql.made).toHaveLength(0)
    const first = built.then((rows) => rows)
    expect(FakeSql.made).toHaveLength(1)
    FakeSql.made[0]!.settle(0, [{ a: 1 }])
    expect([...(await first)]).toEqual([{ a: 1 }])
    const second = send(sql, 'select 2')
    expect(FakeSql.made).toHaveLength(1)
    expect(FakeSql.made[0]!.queries.map((q) => q.query)).toEqual(['select 2'])
    FakeSql.made[0]!.settle()
    await second
  })

  it('opens a new stripe while all are busy, up to max, then pipelines on the least loaded', async () => {
    const sql = pool(2)
    const pending = ['a', 'b', 'c', 'd', 'e'].map((q) => send(sql, q))
    expect(FakeSql.made).toHaveLength(2)
    const [one, two] = FakeSql.made as [FakeSql, FakeSql]
    expect(one.queries.map((q) => q.query)).toEqual(['a', 'c', 'e'])
    expect(two.queries.map((q) => q.query)).toEqual(['b', 'd'])
    // Settling two of the first stripe's queries makes it the less loaded one.
    one.settle()
    one.settle()
    await pending[0]
    await pending[2]
    const next = send(sql, 'f')
    expect(one.queries.map((q) => q.query)).toEqual(['e', 'f'])
    for (const stripe of [one, two]) while (stripe.queries.length) stripe.settle()
    await Promise.all([...pending, next])
  })

  it('frees a stripe when its query fails, and passes the error on', async () => {
    const sql = pool(2)
    const failing = send(sql, 'bad')
    FakeSql.made[0]!.queries.shift()!.reject(new Error('boom'))
    await expect(failing).rejects.toThrow('boom')
    const handled = sql.unsafe('bad again').then(undefined, (error: Error) => `handled ${error.message}`)
    FakeSql.made[0]!.queries.shift()!.reject(new Error('boom'))
    expect(await handled).toBe('handled boom')
    const next = send(sql, 'next')
    expect(FakeSql.made).toHaveLength(1) // the first stripe counts as idle again
    FakeSql.made[0]!.settle()
    await next
  })

  it('keeps queries off a stripe held by a transaction', async () => {
    const sql = pool(2)
    const tx = await sql.reserve()
    expect(FakeSql.made[0]!.reservations).toBe(1)
    const q = send(sql, 'outside')
    expect(FakeSql.made).toHaveLength(2)
    expect(FakeSql.made[1]!.queries.map((x) => x.query)).toEqual(['outside'])
    const inside = tx.unsafe('inside').then((rows) => rows)
    expect(FakeSql.made[0]!.queries.map((x) => x.query)).toEqual(['inside'])
    FakeSql.made[0]!.settle()
    FakeSql.made[1]!.settle()
    await Promise.all([q, inside])
    tx.release()
    tx.release() // a second release is ignored
    expect(FakeSql.made[0]!.reservations).toBe(0)
    const after = send(sql, 'after')
    expect(FakeSql.made[0]!.queries.map((x) => x.query)).toEqual(['after'])
    FakeSql.made[0]!.settle()
    await after
  })

  it('queues behind the least loaded stripe when every stripe is in a transaction', async () => {
    const sql = pool(1)
    const tx = await sql.reserve()
    const q = send(sql, 'waits')
    expect(FakeSql.made).toHaveLength(1)
    expect(FakeSql.made[0]!.queries.map((x) => x.query)).toEqual(['waits'])
    tx.release()
    FakeSql.made[0]!.settle()
    await q
  })

  it('counts a running cursor as in flight until it is done', async () => {
    const sql = pool(2)
    const cursor = sql.unsafe('select rows').cursor!(1)[Symbol.asyncIterator]()
    expect((await cursor.next()).value).toEqual([{ row: 1 }])
    const during = send(sql, 'during')
    expect(FakeSql.made).toHaveLength(2) // the cursor's stripe is busy
    FakeSql.made[1]!.settle()
    await during
    expect((await cursor.next()).value).toEqual([{ row: 2 }])
    expect((await cursor.next()).done).toBe(true)
    const afterwards = send(sql, 'afterwards')
    expect(FakeSql.made[0]!.queries.map((x) => x.query)).toContain('afterwards')
    FakeSql.made[0]!.settle(FakeSql.made[0]!.queries.findIndex((x) => x.query === 'afterwards'))
    await afterwards
  })

  it('ends every stripe it opened', async () => {
    const sql = pool(3)
    const pending = [send(sql, 'a'), send(sql, 'b')]
    for (const stripe of FakeSql.made) stripe.settle()
    await Promise.all(pending)
    await sql.end()
    expect(FakeSql.made.map((s) => s.ended)).toEqual([true, true])
  })

  it('refuses a pool size that is not a positive integer', () => {
    expect(() => stripedSql(() => new FakeSql(), 0)).toThrow('max must be a positive integer')
  })
})
