/**
 * Runs the in-code migrations. Safe to call on every start: applied ones are
 * skipped, and Kysely's migrator takes a lock so concurrent starts of several
 * instances against one PostgreSQL do not race.
 */
import { Migrator, type Kysely } from 'kysely'
import { migrationProvider } from './migrations.ts'
import type { Database } from './schema.ts'

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableName: 'episodic_migrations', migrationLockTableName: 'episodic_migrations_lock' })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
