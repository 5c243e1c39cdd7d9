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
 * @example
 * const sql = stripedSql(() => postgres(url, { max: 1 }), 10)
 * await sql.unsafe('select 1', [], { prepare: true })
 */
import type { PostgresJsReserved, PostgresJsResult, PostgresJsSql } from './postgres-js.ts'

interface Stripe {
  readonly sql: PostgresJsSql
  /** Queries dispatched and not yet settled (a running cursor counts as one). */
  inFlight: number
  /** Reservations (transactions) holding this stripe's connection. */
  reserved: number
}

/** One postgres.js-like pool over up to `max` single-connection instances made by `open`. */
export function stripedSql(open: () => PostgresJsSql, max: number): PostgresJsSql {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`)
  const stripes: Stripe[] = []

  const add = (): Stripe => {
    const stripe = { sql: open(), inFlight: 0, reserved: 0 }
    stripes.push(stripe)
    return stripe
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
        const stripe = pick()
        stripe.inFlight++
        return stripe.sql.unsafe(query, params, options).then(
          (value) => {
            stripe.inFlight--
            return onFulfilled ? onFulfilled(value) : (value as A)
          },
          (error: unknown) => {
            stripe.inFlight--
            if (onRejected) return onRejected(error)
            throw error
          },
        )
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
    try {
      reserved = await stripe.sql.reserve()
    } catch (error) {
      stripe.reserved--
      throw error
    }
    let released = false
    return {
      unsafe: (query, params, options) => reserved.unsafe(query, params, options),
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
      await Promise.all(stripes.map((stripe) => stripe.sql.end(options)))
    },
  }
}
