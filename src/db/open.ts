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
}

/** A Kysely instance over PostgreSQL or PGlite, migrated to the latest schema. */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Kysely<Database>> {
  const db = options.url ? createPostgresDatabase(options.url, options) : await openPGlite(options.dataDir, options.loadDataDir)
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

async function openPGlite(dataDir?: string, loadDataDir?: Blob): Promise<Kysely<Database>> {
  // Loaded lazily: the WASM build is only needed on the embedded default.
  const { PGlite } = await import('@electric-sql/pglite')
  const pg = loadDataDir ? await PGlite.create(dataDir, { loadDataDir }) : await PGlite.create(dataDir)
  return new Kysely<Database>({ dialect: pgliteDialect(pg) })
}
