/**
 * A Kysely dialect over PGlite, the embedded (WASM) PostgreSQL used when no
 * `DATABASE_URL` is configured. PGlite has a single connection, so the driver
 * hands it out behind a mutex: one query, or one whole transaction, at a time.
 *
 * @example
 * const db = new Kysely<Database>({ dialect: pgliteDialect(await PGlite.create(dir)) })
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import { parseJson } from '../http/json.ts'

/** The subset of a PGlite instance this driver uses. */
export interface PGliteLike {
  /** Runs one statement with `$1`-style parameters; `affectedRows` for INSERT/UPDATE/DELETE. */
  query<R>(sql: string, params?: unknown[], options?: { parsers?: Record<number, (text: string) => unknown> }): Promise<{ rows: R[]; affectedRows?: number }>
  /** Closes the database; the driver calls it on `db.destroy()`. */
  close(): Promise<void>
}

class Mutex {
  private tail: Promise<void> = Promise.resolve()

  lock(): Promise<() => void> {
    let release!: () => void
    const next = new Promise<void>((resolve) => (release = resolve))
    const ready = this.tail.then(() => release)
    this.tail = this.tail.then(() => next)
    return ready
  }
}

/**
 * json and jsonb read without rounding an integer past 2^53 (a nanosecond
 * timestamp or a serial number in metadata): PGlite's default parser is
 * `JSON.parse`. postgres-js.ts reads them the same way.
 */
const PARSERS = { 114: (text: string) => parseJson(text), 3802: (text: string) => parseJson(text) }

class PGliteConnection implements DatabaseConnection {
  release: (() => void) | undefined

  constructor(private readonly pg: PGliteLike) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pg.query<R>(query.sql, query.parameters as unknown[], { parsers: PARSERS })
    return {
      rows: result.rows,
      numAffectedRows: result.affectedRows === undefined ? undefined : BigInt(result.affectedRows),
    }
  }

  // A generator, so the error surfaces when Kysely iterates, as with a real stream.
  // deno-lint-ignore require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on the embedded database')
  }
}

class PGliteDriver implements Driver {
  private readonly mutex = new Mutex()

  constructor(private readonly pg: PGliteLike) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = new PGliteConnection(this.pg)
    connection.release = await this.mutex.lock()
    return connection
  }

  async beginTransaction(_connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let begin = 'begin'
    if (settings.isolationLevel) begin += ` isolation level ${settings.isolationLevel}`
    if (settings.accessMode) begin += ` ${settings.accessMode}`
    await this.pg.query(begin)
  }

  async commitTransaction(): Promise<void> {
    await this.pg.query('commit')
  }

  async rollbackTransaction(): Promise<void> {
    await this.pg.query('rollback')
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const conn = connection as PGliteConnection
    conn.release?.()
    conn.release = undefined
    return Promise.resolve()
  }

  async destroy(): Promise<void> {
    await this.pg.close()
  }
}

/** Kysely dialect for a PGlite instance. */
export function pgliteDialect(pg: PGliteLike): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PGliteDriver(pg),
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  }
}
