/**
 * A pre-migrated PGlite for tests. Starting PGlite on an empty cluster runs
 * initdb (5-10 s on a busy 2-core machine); loading a tarball made with
 * PGlite's public `dumpDataDir()` through its `loadDataDir` option takes a
 * fraction of that. test/global-setup.ts makes the tarball once per change
 * of the migrations or of PGlite, and a data folder unpacked from it, which
 * `seedDataDir` copies (a file copy instead of a PGlite start per folder);
 * `openTestDatabase()` uses the tarball when present and falls back to a
 * fresh cluster otherwise (a config without the setup).
 */
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { openDatabase } from '../../src/db/open.ts'
import type { Database } from '../../src/db/schema.ts'
import { ROOT } from './build.ts'

const CACHE = join(ROOT, 'node_modules', '.cache', 'episodic-test')
/** Tests open PGlite hundreds of times, each with a few rows: few shared buffers start faster (see openDatabase). */
const SHARED_BUFFERS = '16MB'

/** Where the snapshot of the current migrations and PGlite version lives. */
export function snapshotPath(): string {
  const hash = createHash('sha256')
    .update(readFileSync(join(ROOT, 'src/db/migrations.ts')))
    .update(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json')))
    .digest('hex')
    .slice(0, 16)
  return join(CACHE, `pglite-${hash}.tar`)
}

/** Makes the snapshot and the data folder unpacked from it unless they exist; returns the snapshot's path. */
export async function ensureSnapshot(): Promise<string> {
  const path = await ensureTarball()
  const folder = templatePath(path)
  if (!existsSync(folder)) {
    const temp = `${folder}.${process.pid}.tmp`
    rmSync(temp, { recursive: true, force: true })
    const db = await openDatabase({ dataDir: temp, loadDataDir: new Blob([readFileSync(path)]), sharedBuffers: SHARED_BUFFERS })
    await db.destroy()
    renameSync(temp, folder)
  }
  return path
}

/** The data folder unpacked from the snapshot at `path` (what `episodic` keeps in `<data dir>/db`). */
function templatePath(path: string): string {
  return path.replace(/\.tar$/, '.datadir')
}

async function ensureTarball(): Promise<string> {
  const path = snapshotPath()
  if (existsSync(path)) return path
  const { PGlite } = await import('@electric-sql/pglite')
  const pg = await PGlite.create()
  const { Kysely } = await import('kysely')
  const { pgliteDialect } = await import('../../src/db/pglite.ts')
  const { migrateToLatest } = await import('../../src/db/migrate.ts')
  const db = new Kysely<Database>({ dialect: pgliteDialect(pg) })
  await migrateToLatest(db)
  const tarball = await pg.dumpDataDir('none')
  await db.destroy()
  mkdirSync(CACHE, { recursive: true })
  const temp = `${path}.${process.pid}.tmp`
  writeFileSync(temp, new Uint8Array(await tarball.arrayBuffer()))
  renameSync(temp, path)
  return path
}

let snapshot: Blob | null | undefined

/** The snapshot as a Blob, or null when no setup made one. */
function loadSnapshot(): Blob | null {
  if (snapshot === undefined) {
    const path = snapshotPath()
    snapshot = existsSync(path) ? new Blob([readFileSync(path)]) : null
  }
  return snapshot
}

/** An in-memory PGlite at the latest schema, started from the snapshot when there is one. */
export function openTestDatabase(): Promise<Kysely<Database>> {
  const blob = loadSnapshot()
  return openDatabase({ ...(blob ? { loadDataDir: blob } : {}), sharedBuffers: SHARED_BUFFERS })
}

/**
 * Prepares `<dataDir>/db` (where `episodic` keeps its embedded database) from
 * the snapshot, so the first command on a fresh data folder skips initdb, and
 * runs `use` on it (e.g. to mint a key) before closing it. The folder is a
 * copy of the one the global setup unpacked (no PGlite start unless `use`).
 * Without a snapshot and without `use` the folder is left empty (the command
 * then runs initdb).
 */
export async function seedDataDir(dataDir: string, use?: (db: Kysely<Database>) => Promise<void>): Promise<void> {
  const template = templatePath(snapshotPath())
  if (existsSync(template)) {
    cpSync(template, join(dataDir, 'db'), { recursive: true })
    if (!use) return
  }
  const blob = existsSync(template) ? null : loadSnapshot()
  if (!blob && !use) return
  const db = await openDatabase({ dataDir: join(dataDir, 'db'), ...(blob ? { loadDataDir: blob } : {}), sharedBuffers: SHARED_BUFFERS })
  try {
    await use?.(db)
  } finally {
    await db.destroy()
  }
}

/** A bare in-memory PGlite at the latest schema (from the snapshot when there is one), for tests that wrap it themselves. */
export async function openTestPGlite() {
  const { PGlite } = await import('@electric-sql/pglite')
  const blob = loadSnapshot()
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`]
  return blob ? PGlite.create({ loadDataDir: blob, startParams }) : PGlite.create({ startParams })
}
