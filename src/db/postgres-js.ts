/**
 * A Kysely dialect over postgres.js that sends every single query as one
 * prepared `unsafe(sql, params, { prepare: true })` call on the pool, and
 * reserves a connection only for transactions.
 *
 * Why not kysely-postgres-js: it reserves a connection for every query, and
 * on postgres.js 3.4.9 that is unsafe when PostgreSQL goes away: a query run
 * on a reserved connection the server has just closed is written from a
 * `setImmediate` to a null socket and crashes the process (reproduced by
 * test/postgres-outage.test.ts with a restart under load, near
 * porsager/postgres#1208), and with `fetch_types: false` its `reserve()` on a
 * new connection never settles (porsager/postgres#751). It also sends
 * unprepared statements; see bench/dialect.ts for the speed of the two.
 * Kysely's own Postgres adapter, compiler and introspector are reused
 * unchanged. A postgres.js instance of your own works too, without what
 * `createPostgresSql`'s striped pool adds for postgres.js 3.4.9 (see
 * `stripes.ts`): a connection the server closed is replaced instead of
 * reused, and a transaction whose session died fails instead of crashing.
 *
 * @example
 * const db = new Kysely<Database>({ dialect: postgresJsDialect(postgres(url)) })
 */
import postgres from 'postgres'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import type { Database } from './schema.ts'
import { stripedSql, type StripeEvents } from './stripes.ts'
import { parseJson } from '../http/json.ts'
import { parseTextArray, serializeTextArray, TEXT_ARRAY_OID } from './text-array.ts'

/**
 * postgres.js types the rows and parameters of this project rely on: jsonb
 * parameters are passed as JSON text (as PGlite takes them), so a string is
 * sent as is instead of being JSON-encoded a second time; and `text[]` is
 * handled here, so pools can run without `fetch_types` (see `text-array.ts`).
 */
export const POSTGRES_JS_TYPES = {
  jsonb: {
    to: 3802,
    from: [114, 3802],
    serialize: (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value)),
    // Integers past 2^53 stay exact (bigint), as on the way in; see http/json.ts.
    parse: (text: string) => parseJson(text),
  },
  textArray: {
    to: TEXT_ARRAY_OID,
    from: [TEXT_ARRAY_OID],
    serialize: (value: unknown) => (Array.isArray(value) ? serializeTextArray(value) : String(value)),
    parse: parseTextArray,
  },
}

/** The subset of a postgres.js `Sql` instance this driver uses. */
export interface PostgresJsSql {
  /** Runs one statement with `$1`-style parameters; `cursor` streams the rows when available. */
  unsafe(query: string, params?: unknown[], options?: { prepare?: boolean }): PromiseLike<PostgresJsResult> & {
    cursor?(rows: number): AsyncIterable<unknown[]>
  }
  /** Takes one connection out of the pool for a transaction. */
  reserve(): Promise<PostgresJsReserved>
  /** Closes the pool, waiting up to `timeout` seconds for queries in flight. */
  end(options?: { timeout?: number }): Promise<void>
}

/** One connection reserved from a postgres.js pool (what `sql.reserve()` returns). */
export interface PostgresJsReserved {
  /** Runs one statement on this connection. */
  unsafe(query: string, params?: unknown[], options?: { prepare?: boolean }): PromiseLike<PostgresJsResult>
  /** Gives the connection back to the pool. */
  release(): void
}

/** The rows of a postgres.js result, with the affected-row `count` and the `command` tag. */
export type PostgresJsResult = unknown[] & { count?: number; command?: string }

const MUTATIONS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

class PostgresJsConnection implements DatabaseConnection {
  reserved: PostgresJsReserved | undefined

  constructor(private readonly sql: PostgresJsSql) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const target = this.reserved ?? this.sql
    const result = await target.unsafe(query.sql, query.parameters as unknown[], { prepare: true })
    return {
      rows: [...result] as R[],
      numAffectedRows: result.command && MUTATIONS.has(result.command) ? BigInt(result.count ?? 0) : undefined,
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    const pending = this.sql.unsafe(query.sql, query.parameters as unknown[], { prepare: true })
    if (!pending.cursor) throw new Error('this postgres.js instance does not support cursors')
    for await (const rows of pending.cursor(chunkSize)) yield { rows: rows as R[] }
  }
}

class PostgresJsDriver implements Driver {
  constructor(private readonly sql: PostgresJsSql) {}

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(new PostgresJsConnection(this.sql))
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const conn = connection as PostgresJsConnection
    conn.reserved = await this.sql.reserve()
    let begin = 'begin'
    if (settings.isolationLevel) begin += ` isolation level ${settings.isolationLevel}`
    if (settings.accessMode) begin += ` ${settings.accessMode}`
    await conn.reserved.unsafe(begin)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresJsConnection).reserved!.unsafe('commit')
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresJsConnection).reserved!.unsafe('rollback')
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const conn = connection as PostgresJsConnection
    conn.reserved?.release()
    conn.reserved = undefined
    return Promise.resolve()
  }

  async destroy(): Promise<void> {
    await this.sql.end({ timeout: 5 })
  }
}

/** Kysely dialect for a postgres.js instance (see the module comment for why). */
export function postgresJsDialect(sql: PostgresJsSql): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PostgresJsDriver(sql),
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  }
}

/** Options of `createPostgresDatabase` and `createPostgresSql`. */
export interface PostgresDatabaseOptions {
  /** Pool size (default 10). */
  max?: number
  /**
   * Seconds to wait for a new connection before failing the query (default 5;
   * postgres.js's own default is 30). A PostgreSQL that is restarting or
   * unreachable then costs a request a few seconds and a 500, not a hang.
   * `DATABASE_CONNECT_TIMEOUT_S` in the environment.
   */
  connectTimeoutSeconds?: number
  /**
   * PostgreSQL's `statement_timeout` for the pool's sessions, in ms (default
   * 30000; 0 turns it off): a statement stuck behind a lock or on a dying
   * server is cancelled by the server. The pool also gives up on a query that
   * has had no answer for this long plus the connect timeout plus 2 s (a
   * frozen or vanished server enforces nothing): it fails with
   * `QUERY_DEADLINE` and its connection is dropped. `DATABASE_STATEMENT_TIMEOUT_MS`.
   */
  statementTimeoutMs?: number
}

/** Defaults of the PostgreSQL timeouts (see `PostgresDatabaseOptions`). */
export const POSTGRES_TIMEOUTS = { connectTimeoutSeconds: 5, statementTimeoutMs: 30_000 }

/**
 * A postgres.js pool for `url` with the options the project's rows rely on
 * (jsonb as JSON text, no notices) and the timeouts above, typed by what
 * `postgresJsDialect` uses.
 * It is striped: up to `max` single-connection postgres.js instances (see
 * `stripes.ts` for the measured reason).
 */
export function createPostgresSql(url: string, options: PostgresDatabaseOptions = {}): PostgresJsSql {
  const statementTimeout = options.statementTimeoutMs ?? POSTGRES_TIMEOUTS.statementTimeoutMs
  const open = ({ onclose }: StripeEvents): PostgresJsSql =>
    postgres(url, {
      max: 1,
      onclose,
      onnotice: () => {},
      types: POSTGRES_JS_TYPES,
      // No pg_type lookup on every new connection (one round trip each, i.e.
      // one per request on Workers): the only array type used, text[], is above.
      fetch_types: false,
      connect_timeout: options.connectTimeoutSeconds ?? POSTGRES_TIMEOUTS.connectTimeoutSeconds,
      connection: { application_name: 'episodic', ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}) },
    })
  const connectTimeoutMs = (options.connectTimeoutSeconds ?? POSTGRES_TIMEOUTS.connectTimeoutSeconds) * 1000
  return stripedSql(open, options.max ?? 10, { deadlineMs: statementTimeout > 0 ? statementTimeout + connectTimeoutMs + 2000 : 0 })
}

/**
 * A Kysely instance over a new postgres.js pool for `url` (see
 * `createPostgresSql`). Not migrated: see `openDatabase` or `migrateToLatest`.
 *
 * @example
 * const db = createPostgresDatabase('postgres://localhost/episodic', { max: 5 })
 */
export function createPostgresDatabase(url: string, options: PostgresDatabaseOptions = {}): Kysely<Database> {
  return new Kysely<Database>({ dialect: postgresJsDialect(createPostgresSql(url, options)) })
}
