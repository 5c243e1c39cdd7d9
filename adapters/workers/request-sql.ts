/**
 * One Kysely instance per isolate over a postgres.js pool per request. A
 * Worker may not touch a socket opened while serving another request, so
 * every request brings its own pool; the app (routes, authenticator, portal)
 * is still built once per isolate. The dialect gets a stand-in `sql` that
 * forwards each call to the pool of the request it runs in, found through
 * AsyncLocalStorage (nodejs_compat), which follows every await of that request.
 *
 * @example
 * const scoped = requestScopedSql()
 * const db = new Kysely<Database>({ dialect: postgresJsDialect(scoped.sql) })
 * await scoped.run(createPostgresSql(url), () => app.fetch(request))
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { PostgresJsSql } from '../../src/db/postgres-js.ts'

/** The stand-in `sql` and the way to run a request against its own pool. */
export interface RequestScopedSql {
  /** Forwards to the pool of the current request; throws outside `run`. */
  sql: PostgresJsSql
  /** Runs `fn` with `pool` as the current request's pool. */
  run<T>(pool: PostgresJsSql, fn: () => T): T
}

/** Creates the stand-in and its request scope (see the module comment). */
export function requestScopedSql(): RequestScopedSql {
  const scope = new AsyncLocalStorage<PostgresJsSql>()
  const current = (): PostgresJsSql => {
    const pool = scope.getStore()
    if (!pool) throw new Error('database used outside a request: Workers have no connection to use')
    return pool
  }
  return {
    sql: {
      unsafe: (query, params, options) => current().unsafe(query, params, options),
      reserve: () => current().reserve(),
      // Pools end with their request; the isolate-wide Kysely owns none.
      end: async () => {},
    },
    run: (pool, fn) => scope.run(pool, fn),
  }
}
