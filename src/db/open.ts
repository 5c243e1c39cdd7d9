/**
 * Opens the database the core runs on: PostgreSQL through postgres.js when a
 * URL is given (production, many stateless instances), otherwise the embedded
 * PGlite in a data folder (or in memory), then applies migrations.
 *
 * @example
 * const db = await openDatabase({ url: 'postgres://localhost/episodic' })
 * const db = await openDatabase({ dataDir: './.episodic/db' })
 */
import { Kysely } from 'kysely'
import { migrateToLatest } from './migrate.ts'
import { createPostgresDatabase } from './postgres-js.ts'
import { pgliteDialect } from './pglite.ts'
import type { Database } from './schema.ts'

/** Options of `openDatabase`: PostgreSQL when `url` is given, otherwise the embedded PGlite. */
export interface OpenDatabaseOptions {
  /** PostgreSQL URL; when absent the embedded PGlite is used. */
  url?: string
  /** PGlite data folder; absent means in memory. */
  dataDir?: string
  /** Pool size for PostgreSQL (default 10). */
  max?: number
  /** PostgreSQL: give up opening a connection after this many seconds (default 5). */
  connectTimeoutSeconds?: number
  /** PostgreSQL: cancel a statement after this many milliseconds (default 30000; 0: never). */
  statementTimeoutMs?: number
  /** Skip migrations (default false). */
  skipMigrations?: boolean
  /**
   * PGlite only: start from this `dumpDataDir()` tarball instead of an empty
   * cluster (PGlite's `loadDataDir` option). Tests start from a pre-migrated
   * snapshot this way, skipping initdb.
   */
  loadDataDir?: Blob
  /**
   * PGlite only: PostgreSQL's `shared_buffers` for this start, such as
   * `'16MB'` (default PostgreSQL's 128MB). PGlite sets all of them up at
   * every start, so a short-lived command (an admin verb, a test) opens
   * faster with few: 1.1 s against 0.7 s with 16MB on a 2-vCPU VM, and the
   * process holds about 150 MB less memory. A server keeps the default for
   * its hot data unless `EPISODIC_EMBEDDED_SHARED_BUFFERS` says otherwise.
   */
  sharedBuffers?: string
}

/** A Kysely instance over PostgreSQL or PGlite, migrated to the latest schema. */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Kysely<Database>> {
  const db = options.url ? createPostgresDatabase(options.url, options) : await openPGlite(options)
  if (!options.skipMigrations) {
    try {
      await migrateToLatest(db)
    } catch (error) {
      await db.destroy()
      throw error
    }
  }
  return db
}

async function openPGlite({ dataDir, loadDataDir, sharedBuffers }: OpenDatabaseOptions): Promise<Kysely<Database>> {
  // Loaded lazily: the WASM build is only needed on the embedded default.
  const { PGlite } = await import('@electric-sql/pglite')
  const pg = await PGlite.create(dataDir, {
    ...(loadDataDir ? { loadDataDir } : {}),
    ...(sharedBuffers ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] } : {}),
  })
  return new Kysely<Database>({ dialect: pgliteDialect(pg) })
}
