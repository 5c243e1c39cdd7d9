/**
 * A postgres.js pool made of single-connection postgres.js instances
 * ("stripes"), which the driver uses in place of one `postgres({ max })`.
 *
 * Why: postgres.js 3.4 keeps its idle/busy connection lists in an array
 * queue whose `shift()` leaves a hole and whose `remove()` is an `indexOf`
 * over the whole array; under steady load the busy list only ever grows, so
 * every query pays a scan that lengthens until the pool drains (the slowdown
 * seen in porsager/postgres#747). Profiled here it was the largest JS item in
 * the server (~8 us a request and climbing); with one connection per instance
 * that list never holds more than one entry. Measured on the same INSERT +
 * UPDATE pair, 50 clients: 10 stripes ran 1.2-1.3x the rate of `max: 10`.
 *
 * A query goes to an idle stripe if there is one, else opens a new stripe
 * while fewer than `max` exist, else is pipelined on the stripe with the
 * fewest queries in flight, which is what postgres.js does with its busy
 * connections. Stripes are opened lazily, so an unused pool costs nothing.
 *
 * A transaction (`reserve`) takes a stripe no other query is then placed on,
 * and only once its connection is open and idle: postgres.js 3.4.9's own
 * `reserve()` never settles when it has to open the connection itself with
 * `fetch_types: false` (porsager/postgres#751, #1219), which is the case on a
 * new stripe, after `max_lifetime` or after a dropped connection. So when the
 * stripe is not known to be open and idle, a `select 1` goes first: it opens
 * the connection and queues behind whatever the stripe was still running.
 *
 * When a stripe's connection closes (the server ended the session, the
 * network dropped, `max_lifetime`), the stripe moves to a new instance and
 * the old one is ended with `timeout: 0`, failing what it still held rather
 * than keeping it. postgres.js 3.4.9 cannot be trusted after such a close: its
 * `closed()` cancels a deferred small write's `setImmediate` but keeps the
 * timer's id, so that connection never schedules a write again, and a query
 * parked while reconnecting can stay pending for good (near
 * porsager/postgres#1154 and #1193). Measured with sessions killed under
 * load: a kept instance hung every time; a fresh one serves at once. A
 * transaction whose stripe has moved on gets `CONNECTION_CLOSED` for any
 * further query without it reaching postgres.js, whose ROLLBACK on the dead
 * connection was written from a `setImmediate` to a null socket and crashed
 * the process (porsager/postgres#1208).
 *
 * With `deadlineMs`, a query (a transaction's too) that has had no answer
 * for that long is failed with `QUERY_DEADLINE` and its stripe is treated as
 * closed: moved to a new instance, the old one ended at once. A statement
 * timeout is enforced by the server, so a frozen or vanished server (sockets
 * open, nothing answering) would otherwise hold every request for good.
 *
 * @example
 * const sql = stripedSql(({ onclose }) => postgres(url, { max: 1, onclose }), 10)
 * await sql.unsafe('select 1', [], { prepare: true })
 */
import type { PostgresJsReserved, PostgresJsResult, PostgresJsSql } from './postgres-js.ts'

/** What a stripe's instance reports back (postgres.js's `onclose` option). */
export interface StripeEvents {
  /** Its connection closed (ended, dropped, or past `max_lifetime`). */
  onclose(): void
}

interface Stripe {
  /** The stripe's current instance; replaced when its connection closes. */
  sql: PostgresJsSql
  /** Queries dispatched and not yet settled (a running cursor counts as one). */
  inFlight: number
  /** Reservations (transactions) holding this stripe's connection. */
  reserved: number
  /** A query succeeded on the connection and it has not closed since. */
  open: boolean
}

/** Options of `stripedSql`. */
export interface StripeOptions {
  /** Fail a query with no answer after this many ms and drop its connection (0 or absent: wait). */
  deadlineMs?: number
}

/** What a query gets when the server has not answered it within the deadline. */
function noAnswer(ms: number): Error {
  return Object.assign(new Error(`PostgreSQL did not answer within ${ms} ms; its connection was dropped`), { code: 'QUERY_DEADLINE' })
}

/** What a transaction's query gets once its connection has closed (with postgres.js's error code for it). */
function connectionClosed(): Error {
  return Object.assign(new Error('the connection of this transaction closed'), { code: 'CONNECTION_CLOSED' })
}

/**
 * One postgres.js-like pool over up to `max` single-connection instances made
 * by `open`, which must pass `events.onclose` on to postgres.js.
 */
export function stripedSql(open: (events: StripeEvents) => PostgresJsSql, max: number, options: StripeOptions = {}): PostgresJsSql {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`)
  const deadlineMs = options.deadlineMs ?? 0
  const stripes: Stripe[] = []
  let ending = false

  /** A new instance for `stripe`; when its connection closes, `replace` moves the stripe on. */
  const instance = (stripe: Stripe): PostgresJsSql => {
    const sql = open({ onclose: () => replace(stripe, sql) })
    return sql
  }

  /**
   * Gives `stripe` a fresh instance for what comes next and ends `sql`, its
   * old one, at once, which rejects whatever it still held (see the module
   * comment for why an instance is never reused after a close).
   */
  const replace = (stripe: Stripe, sql: PostgresJsSql): void => {
    if (stripe.sql !== sql || ending) return
    stripe.open = false
    stripe.sql = instance(stripe)
    void sql.end({ timeout: 0 }).catch(() => {})
  }

  /** `query`, failed (and its stripe's instance `sql` replaced) if no answer comes within the deadline. */
  const bounded = (query: PromiseLike<PostgresJsResult>, stripe: Stripe, sql: PostgresJsSql): PromiseLike<PostgresJsResult> => {
    if (deadlineMs <= 0) return query
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        replace(stripe, sql)
        reject(noAnswer(deadlineMs))
      }, deadlineMs)
      query.then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(error)
        },
      )
    })
  }

  const add = (): Stripe => {
    const stripe = { inFlight: 0, reserved: 0, open: false } as Stripe
    stripe.sql = instance(stripe)
    stripes.push(stripe)
    return stripe
  }

  /** Runs one query on `stripe`, keeping its counts; the handlers are `then`'s. */
  function run<A = PostgresJsResult, B = never>(
    stripe: Stripe,
    query: string,
    params?: unknown[],
    options?: { prepare?: boolean },
    onFulfilled?: ((value: PostgresJsResult) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    stripe.inFlight++
    const sql = stripe.sql
    return bounded(sql.unsafe(query, params, options), stripe, sql).then(
      (value) => {
        stripe.inFlight--
        // Said of the instance it ran on, which a close may have replaced since.
        if (stripe.sql === sql) stripe.open = true
        return onFulfilled ? onFulfilled(value) : (value as A)
      },
      (error: unknown) => {
        stripe.inFlight--
        if (onRejected) return onRejected(error)
        throw error
      },
    )
  }

  /** The stripe for the next query (see the module comment); reserved stripes last. */
  const pick = (): Stripe => {
    let best: Stripe | undefined
    for (const stripe of stripes) {
      if (stripe.reserved > 0) continue
      if (stripe.inFlight === 0) return stripe
      if (best === undefined || stripe.inFlight < best.inFlight) best = stripe
    }
    if (stripes.length < max) return add()
    if (best) return best
    // Every stripe is in a transaction: queue behind the least loaded.
    return stripes.reduce((a, b) => (b.inFlight + b.reserved < a.inFlight + a.reserved ? b : a))
  }

  function unsafe(query: string, params?: unknown[], options?: { prepare?: boolean }) {
    // postgres.js queries are lazy (they run when awaited), and so is the
    // choice of stripe: a query is placed when it is sent, not when built.
    return {
      then<A = PostgresJsResult, B = never>(
        onFulfilled?: ((value: PostgresJsResult) => A | PromiseLike<A>) | null,
        onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
      ): PromiseLike<A | B> {
        return run(pick(), query, params, options, onFulfilled, onRejected)
      },
      async *cursor(rows: number): AsyncIterable<unknown[]> {
        const stripe = pick()
        const pending = stripe.sql.unsafe(query, params, options)
        if (!pending.cursor) throw new Error('this postgres.js instance does not support cursors')
        stripe.inFlight++
        try {
          yield* pending.cursor(rows)
        } finally {
          stripe.inFlight--
        }
      },
    }
  }

  async function reserve(): Promise<PostgresJsReserved> {
    const stripe = pick()
    stripe.reserved++
    let reserved: PostgresJsReserved
    let held: PostgresJsSql
    try {
      // Open and idle, or postgres.js may hang (see the module comment). Only
      // microtasks run between this query settling and reserve() taking the
      // connection, so nothing can close or busy it in between.
      if (!stripe.open || stripe.inFlight > 0) await run(stripe, 'select 1')
      held = stripe.sql
      reserved = await held.reserve()
    } catch (error) {
      stripe.reserved--
      throw error
    }
    let released = false
    return {
      // Once the connection has closed, nothing more is sent on it: postgres.js
      // 3.4.9 would write to the closed socket from a setImmediate and throw
      // where nobody can catch it (porsager/postgres#1208), which is what a
      // transaction's ROLLBACK after a dropped connection used to do.
      unsafe: (query, params, options) =>
        stripe.sql === held ? bounded(reserved.unsafe(query, params, options), stripe, held) : Promise.reject(connectionClosed()),
      release() {
        if (released) return
        released = true
        stripe.reserved--
        reserved.release()
      },
    }
  }

  return {
    unsafe,
    reserve,
    async end(options) {
      ending = true
      await Promise.all(stripes.map((stripe) => stripe.sql.end(options)))
    },
  }
}
