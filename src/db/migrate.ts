/**
 * Runs the in-code migrations. Safe to call on every start: applied ones are
 * skipped, and Kysely's migrator takes a lock so concurrent starts of several
 * instances against one PostgreSQL do not race.
 */
import { type Kysely, Migrator } from 'kysely'
import { migrationProvider } from './migrations.ts'
import type { Database } from './schema.ts'

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    migrationTableName: 'episodic_migrations',
    migrationLockTableName: 'episodic_migrations_lock',
  })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/**
 * `migrateToLatest(db)` at most once per returned function: the first call
 * migrates and every later one shares its outcome; a failure is forgotten,
 * so the next call tries again. For runtimes that build the app before they
 * may touch the database (Workers: on the first request of an isolate).
 *
 * @example
 * const migrated = migrateOnce(db)
 * export default { fetch: async (request) => (await migrated(), app.fetch(request)) }
 */
export function migrateOnce(db: Kysely<Database>): () => Promise<void> {
  let migrated: Promise<void> | undefined
  return () => (migrated ??= migrateToLatest(db).then(
    () => undefined,
    (error: unknown) => {
      migrated = undefined
      throw error
    },
  ))
}
