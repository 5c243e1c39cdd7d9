import { describe, expect, it } from 'vitest'
import { createTempDatabase, postgresAvailable, TEST_DATABASE_URL } from '../../test/helpers/postgres.ts'
import { sql as kysql } from 'kysely'
import { createPostgresDatabase, createPostgresSql, type PostgresJsReserved, type PostgresJsResult, type PostgresJsSql } from './postgres-js.ts'
import { stripedSql, type StripeEvents } from './stripes.ts'

/**
 * A stand-in single-connection instance: records queries and settles them on
 * demand. Like postgres.js 3.4.9 with `fetch_types: false`, it cannot reserve
 * a connection it has not opened (there it hangs; here it throws).
 */
class FakeSql implements PostgresJsSql {
  static made: FakeSql[] = []
  readonly queries: Array<{ query: string; resolve(rows: PostgresJsResult): void; reject(error: Error): void }> = []
  reservations = 0
  ended = false
  /** A query has succeeded and the connection has not been dropped since. */
  connected = false
  readonly id = FakeSql.made.length

  constructor(private readonly events?: StripeEvents) {
    FakeSql.made.push(this)
  }

  unsafe(query: string) {
    const promise = new Promise<PostgresJsResult>((resolve, reject) =>
      this.queries.push({ query, resolve: (rows) => ((this.connected = true), resolve(rows)), reject })
    )
    return Object.assign(promise, {
      cursor: async function* () {
        yield [{ row: 1 }]
        yield [{ row: 2 }]
      },
    })
  }

  reserve(): Promise<PostgresJsReserved> {
    if (!this.connected) return Promise.reject(new Error('reserve() on an unopened connection: postgres.js would hang here'))
    if (this.queries.length) return Promise.reject(new Error('reserve() on a busy connection: postgres.js would queue it'))
    this.reservations++
    return Promise.resolve({ unsafe: (query) => this.unsafe(query), release: () => void this.reservations-- })
  }

  end(): Promise<void> {
    this.ended = true
    return Promise.resolve()
  }

  settle(index = 0, rows: unknown[] = []) {
    this.queries.splice(index, 1)[0]!.resolve(Object.assign(rows, { count: rows.length }))
  }

  /** The connection closes, as after max_lifetime or a network error. */
  drop() {
    this.connected = false
    this.events?.onclose()
  }
}

function pool(max: number, deadlineMs?: number) {
  FakeSql.made = []
  return stripedSql((events) => new FakeSql(events), max, { deadlineMs })
}

/** Reserves, answering the `select 1` the pool sends first to open the connection. */
function reserveOpening(sql: PostgresJsSql): Promise<PostgresJsReserved> {
  const pending = sql.reserve()
  for (const fake of FakeSql.made) {
    const ping = fake.queries.findIndex((q) => q.query === 'select 1')
    if (ping >= 0) fake.settle(ping)
  }
  return pending
}

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
    const tx = await reserveOpening(sql)
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
    const tx = await reserveOpening(sql)
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

  it('opens a new stripe with a query before reserving it, and reserves an open idle one at once', async () => {
    const sql = pool(2)
    const pending = sql.reserve()
    const fake = FakeSql.made[0]!
    expect(fake.queries.map((q) => q.query)).toEqual(['select 1'])
    fake.settle()
    const tx = await pending
    expect(fake.reservations).toBe(1)
    tx.release()
    const again = await sql.reserve() // open and idle: no query first
    expect(fake.queries).toHaveLength(0)
    expect(fake.reservations).toBe(1)
    again.release()
  })

  it('reserves a busy stripe only after what it was running, and no new query lands on it meanwhile', async () => {
    const sql = pool(1)
    const first = send(sql, 'first')
    FakeSql.made[0]!.settle() // the connection is open now
    await first
    const running = send(sql, 'running')
    const pending = sql.reserve()
    const fake = FakeSql.made[0]!
    expect(fake.queries.map((q) => q.query)).toEqual(['running', 'select 1'])
    fake.settle()
    fake.settle()
    await running
    const tx = await pending
    expect(fake.reservations).toBe(1)
    tx.release()
  })

  it('moves a stripe to a new instance when its connection closes, ending the old one', async () => {
    const sql = pool(1)
    ;(await reserveOpening(sql)).release()
    const stuck = send(sql, 'in flight when the connection went')
    FakeSql.made[0]!.drop()
    expect(FakeSql.made).toHaveLength(2)
    expect(FakeSql.made[0]!.ended).toBe(true)
    // A late close of the old instance changes nothing, nor do closes once the pool is ending.
    FakeSql.made[0]!.drop()
    expect(FakeSql.made).toHaveLength(2)
    const pending = sql.reserve()
    expect(FakeSql.made[1]!.queries.map((q) => q.query)).toEqual(['select 1'])
    FakeSql.made[1]!.settle()
    ;(await pending).release()
    FakeSql.made[0]!.queries[0]!.reject(new Error('CONNECTION_DESTROYED'))
    await expect(stuck).rejects.toThrow('CONNECTION_DESTROYED')
    await sql.end()
    FakeSql.made[1]!.drop()
    expect(FakeSql.made).toHaveLength(2)
  })

  it('does not count the new instance as open when a query on the replaced one succeeds late', async () => {
    const sql = pool(1)
    const late = send(sql, 'answered after the close')
    FakeSql.made[0]!.drop()
    FakeSql.made[0]!.settle()
    await late
    const pending = sql.reserve()
    expect(FakeSql.made[1]!.queries.map((q) => q.query)).toEqual(['select 1'])
    FakeSql.made[1]!.settle()
    ;(await pending).release()
  })

  it('sends nothing more on a transaction whose connection closed', async () => {
    const sql = pool(1)
    const tx = await reserveOpening(sql)
    const first = tx.unsafe('update x')
    FakeSql.made[0]!.drop()
    await expect(tx.unsafe('rollback')).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' })
    expect(FakeSql.made[0]!.queries.map((q) => q.query)).toEqual(['update x'])
    tx.release()
    FakeSql.made[0]!.queries[0]!.reject(new Error('CONNECTION_CLOSED'))
    await expect(first).rejects.toThrow('CONNECTION_CLOSED')
  })

  it('fails the reservation, and frees the stripe, when the connection cannot be opened', async () => {
    const sql = pool(1)
    const pending = sql.reserve()
    FakeSql.made[0]!.queries.shift()!.reject(new Error('connection refused'))
    await expect(pending).rejects.toThrow('connection refused')
    const next = send(sql, 'next')
    expect(FakeSql.made[0]!.queries.map((q) => q.query)).toEqual(['next'])
    FakeSql.made[0]!.settle()
    await next
  })

  it('fails a query with no answer within the deadline and moves its stripe to a new instance', async () => {
    const sql = pool(1, 40)
    const answered = send(sql, 'answered in time')
    FakeSql.made[0]!.settle(0, [{ ok: 1 }])
    expect([...(await answered)]).toEqual([{ ok: 1 }])
    const started = Date.now()
    await expect(send(sql, 'no answer')).rejects.toMatchObject({ code: 'QUERY_DEADLINE', message: expect.stringContaining('within 40 ms') })
    expect(Date.now() - started).toBeGreaterThanOrEqual(35)
    expect(FakeSql.made).toHaveLength(2)
    expect(FakeSql.made[0]!.ended).toBe(true)
    // The next query goes to the fresh instance; an answer in time clears its timer.
    const next = send(sql, 'next')
    expect(FakeSql.made[1]!.queries.map((q) => q.query)).toEqual(['next'])
    FakeSql.made[1]!.settle()
    await next
    await new Promise((r) => setTimeout(r, 80))
    expect(FakeSql.made).toHaveLength(2)
    expect(FakeSql.made[1]!.ended).toBe(false)
  })

  it("bounds a transaction's queries too: past the deadline it fails, and nothing more is sent on it", async () => {
    const sql = pool(1, 40)
    const tx = await reserveOpening(sql)
    await expect(tx.unsafe('update stuck')).rejects.toMatchObject({ code: 'QUERY_DEADLINE' })
    expect(FakeSql.made[0]!.ended).toBe(true)
    await expect(tx.unsafe('rollback')).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' })
    expect(FakeSql.made[0]!.queries.map((q) => q.query)).toEqual(['update stuck'])
    tx.release()
    const next = send(sql, 'after')
    FakeSql.made[1]!.settle()
    await next
  })

  it('refuses a pool size that is not a positive integer', () => {
    expect(() => stripedSql(() => new FakeSql(), 0)).toThrow('max must be a positive integer')
  })
})

// The same rules with the real driver: each stripe is its own server session.
describe.skipIf(!postgresAvailable())('stripedSql over postgres.js on the real server', () => {
  const pid = (sql: PostgresJsSql, sleep = 0.05) =>
    Promise.resolve(sql.unsafe('select pg_backend_pid() as pid, pg_sleep($1)', [sleep], { prepare: true })).then((rows) => (rows[0] as { pid: number }).pid)

  it('spreads concurrent queries over up to max connections, then pipelines on them', async () => {
    const sql = createPostgresSql(TEST_DATABASE_URL!, { max: 3 })
    try {
      expect(new Set(await Promise.all([pid(sql), pid(sql), pid(sql)])).size).toBe(3)
      const eight = await Promise.all(Array.from({ length: 8 }, () => pid(sql)))
      expect(new Set(eight).size).toBe(3)
      // A failed query settles its stripe like a good one: three at once still get three sessions.
      await expect(sql.unsafe('select nonsense from nowhere', [], { prepare: true })).rejects.toThrow('nowhere')
      expect(new Set(await Promise.all([pid(sql), pid(sql), pid(sql)])).size).toBe(3)
    } finally {
      await sql.end()
    }
  })

  it('reserves as the first thing a new pool does, and again after the server dropped the connection', async () => {
    // postgres.js 3.4.9 alone hangs on both (porsager/postgres#751) with fetch_types: false.
    const sql = createPostgresSql(TEST_DATABASE_URL!, { max: 1 })
    const admin = createPostgresSql(TEST_DATABASE_URL!, { max: 1 })
    try {
      const first = await sql.reserve()
      const [row] = await first.unsafe('select pg_backend_pid() as pid')
      first.release()
      const dropped = (row as { pid: number }).pid
      await admin.unsafe('select pg_terminate_backend($1)', [dropped], { prepare: true })
      // The stripe hears of the close once the socket ends; reserve must then reopen it.
      await new Promise((resolve) => setTimeout(resolve, 200))
      const second = await sql.reserve()
      const [again] = await second.unsafe('select pg_backend_pid() as pid')
      second.release()
      expect((again as { pid: number }).pid).not.toBe(dropped)
    } finally {
      await sql.end()
      await admin.end()
    }
  })

  it('serves again once the server stops killing its sessions, every query settled', async () => {
    // postgres.js 3.4.9 leaves a connection unable to write again when it
    // closes with a small write still deferred (porsager/postgres#1154; its
    // teardown clears the deferral's timer without forgetting it), so a
    // stripe that kept its instance hung for good after such a close.
    const temp = await createTempDatabase()
    const sql = createPostgresSql(temp.url, { max: 4 })
    const admin = createPostgresSql(TEST_DATABASE_URL!, { max: 1 })
    const name = new URL(temp.url).pathname.slice(1)
    let killing = true
    const outcomes = { ok: 0, failed: 0 }
    // Queries sent from setImmediate callbacks, as the batched ingest writer sends them.
    const client = async () => {
      while (killing) {
        await new Promise((resolve) => setImmediate(resolve))
        await sql.unsafe('select $1::int as x', [1], { prepare: true }).then(() => outcomes.ok++, () => outcomes.failed++)
      }
    }
    const within = <T>(ms: number, what: string, work: Promise<T>) =>
      Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms))])
    try {
      const clients = Array.from({ length: 20 }, client)
      for (let round = 0; round < 15; round++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        await admin.unsafe('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name], { prepare: true })
      }
      killing = false
      await within(10_000, 'queries sent while sessions were being killed', Promise.all(clients))
      expect(outcomes.failed).toBeGreaterThan(0)
      // The last kills' closes may still be arriving: a round of 20 queries must
      // all succeed within 10 s, and no round may leave a query pending.
      const deadline = Date.now() + 10_000
      for (;;) {
        const round = await within(
          10_000,
          'queries after the kills',
          Promise.allSettled(Array.from({ length: 20 }, () => sql.unsafe('select 1 as one', [], { prepare: true }))),
        )
        if (round.every((outcome) => outcome.status === 'fulfilled')) break
        if (Date.now() > deadline) throw new Error(`queries still failing 10 s after the kills: ${round.find((o) => o.status === 'rejected')?.reason}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const tx = await within(10_000, 'a transaction after the kills', sql.reserve())
      expect(await tx.unsafe('select 2 as two')).toEqual([{ two: 2 }])
      tx.release()
    } finally {
      killing = false
      await sql.end({ timeout: 0 })
      await admin.end()
      await temp.drop()
    }
  }, 60_000)

  it('fails a transaction whose session the server ends, without writing to the closed socket, and serves the next', async () => {
    // Kysely then sends ROLLBACK on the dead connection; postgres.js 3.4.9
    // would write it from a setImmediate to a null socket and throw where
    // nothing can catch it, which crashes the process (porsager/postgres#1208).
    const temp = await createTempDatabase()
    const db = createPostgresDatabase(temp.url, { max: 2 })
    const admin = createPostgresSql(TEST_DATABASE_URL!, { max: 1 })
    const name = new URL(temp.url).pathname.slice(1)
    try {
      for (let round = 0; round < 5; round++) {
        const tx = db.transaction().execute(async (trx) => {
          await kysql`select 1`.execute(trx)
          await kysql`select pg_sleep(5)`.execute(trx)
        })
        const outcome = tx.then(() => 'committed', (error: { code?: string }) => error.code)
        for (let tries = 0; tries < 100; tries++) {
          const [row] = await admin.unsafe(
            "select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and query like '%pg_sleep(5)%' and pid <> pg_backend_pid()",
            [name],
            { prepare: true },
          )
          if ((row as { n: number }).n > 0) break
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        expect(await outcome).toBe('CONNECTION_CLOSED')
        // Give a stray deferred write the turn it would need to go off.
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(await db.transaction().execute((trx) => kysql<{ n: number }>`select 3 as n`.execute(trx))).toMatchObject({ rows: [{ n: 3 }] })
    } finally {
      await db.destroy()
      await admin.end()
      await temp.drop()
    }
  }, 60_000)

  it('keeps other queries off a stripe held by a transaction', async () => {
    const sql = createPostgresSql(TEST_DATABASE_URL!, { max: 2 })
    try {
      const reserved = await sql.reserve()
      await reserved.unsafe('begin')
      const [held] = await reserved.unsafe('select pg_backend_pid() as pid')
      const others = await Promise.all([pid(sql), pid(sql), pid(sql)])
      expect(others).not.toContain((held as { pid: number }).pid)
      await reserved.unsafe('commit')
      reserved.release()
      expect(new Set(await Promise.all([pid(sql), pid(sql)])).size).toBe(2)
    } finally {
      await sql.end()
    }
  })
})
