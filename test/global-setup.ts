/**
 * Once per `vitest run`, before any test file: the pre-migrated PGlite
 * snapshot (test/helpers/pglite.ts). Cached on disk, so only the first run
 * after a migration or PGlite change pays for it. The package build is not
 * made here but on first use (test/helpers/build.ts), so running one unrelated
 * file never waits for it.
 */
import { ensureSnapshot } from './helpers/pglite.ts'

export default async function setup(): Promise<void> {
  await ensureSnapshot()
}
