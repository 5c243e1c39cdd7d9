/**
 * One process per embedded data folder. PGlite keeps its files in the folder
 * and assumes it is their only user: two servers on one folder silently split
 * and lose episodes and keys. The process that opens the folder's database
 * writes its pid to `<dataDir>/episodic.lock` (created exclusively); another
 * process that finds a live pid there refuses at once with
 * `data folder <dir> is in use by process <pid>`.
 *
 * A lock left by a process that was killed (its pid is gone, or a zombie) is
 * taken over: under a second, short-lived `episodic.lock.break` file, so of
 * two processes breaking the same stale lock only one removes it, and the
 * other then finds the winner's live pid.
 *
 * @example
 * const lock = lockDataFolder('./.episodic')  // throws DataFolderInUse
 * try { ... } finally { lock.release() }
 */
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/** Another live process holds the data folder. */
export class DataFolderInUse extends Error {
  /** Always `'DataFolderInUse'`, so the error can be matched by name. */
  override readonly name = 'DataFolderInUse'
  /** `dataDir` is the folder asked for, `pid` the live process holding its lock. */
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`data folder ${dataDir} is in use by process ${pid}`)
  }
}

/** The lock `lockDataFolder` took; release it when the database is closed. */
export interface DataLock {
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void
}

const LOCK_FILE = 'episodic.lock'
/** A lock file still empty after this long was left by a process that died while writing it. */
const EMPTY_GRACE_MS = 2000
/** A breaker file older than this was left by a process that died while breaking. */
const BREAKER_GRACE_MS = 10_000

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** True when `pid` names a running process (a zombie counts as gone). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  try {
    // Linux: a killed child its parent has not reaped yet is a zombie, state Z.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return true
  }
}

/** The pid in a lock file: a number, null while empty or garbled, undefined when there is no file. */
function readHolder(file: string): number | null | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const pid = Number(text.trim())
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs
  } catch {
    return 0
  }
}

/** Creates `file` holding `text`, or returns false when it exists. */
function createExclusive(file: string, text: string): boolean {
  let fd: number
  try {
    fd = openSync(file, 'wx', 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
  return true
}

/** Removes `file` if it still holds `holder` (checked under the breaker file). */
function breakStale(file: string, holder: number | null): void {
  const breaker = `${file}.break`
  if (!createExclusive(breaker, `${process.pid}\n`)) {
    if (ageMs(breaker) > BREAKER_GRACE_MS) unlinkSync(breaker)
    else sleep(20)
    return
  }
  try {
    if (readHolder(file) === holder) unlinkSync(file)
  } finally {
    unlinkSync(breaker)
  }
}

/**
 * The pid of a live process holding `dataDir`, or undefined. Read-only: a
 * caller uses it to refuse before doing anything else.
 */
export function dataFolderHolder(dataDir: string): number | undefined {
  const holder = readHolder(join(dataDir, LOCK_FILE))
  return typeof holder === 'number' && holder !== process.pid && processAlive(holder) ? holder : undefined
}

/**
 * A data folder this code creates is the user's alone, as PostgreSQL keeps
 * its own: it holds the database (API key hashes, webhook signing secrets in
 * its write-ahead log) and the objects, whose files are created readable
 * under the usual umask. An existing folder keeps its mode.
 */
export const DATA_FOLDER_MODE = 0o700

/** Takes the data folder for this process, or throws DataFolderInUse. */
export function lockDataFolder(dataDir: string): DataLock {
  mkdirSync(dataDir, { recursive: true, mode: DATA_FOLDER_MODE })
  const file = join(dataDir, LOCK_FILE)
  const mine = `${process.pid}\n`
  for (let attempt = 0; attempt < 200; attempt++) {
    if (createExclusive(file, mine)) {
      let held = true
      return {
        release() {
          if (!held) return
          held = false
          try {
            if (readHolder(file) === process.pid) unlinkSync(file)
          } catch {
            // Already gone: nothing to release.
          }
        },
      }
    }
    const holder = readHolder(file)
    if (holder === undefined) continue // removed meanwhile: try again
    // This process holding it already (an app opened twice) is a conflict too.
    if (holder !== null && (holder === process.pid || processAlive(holder))) throw new DataFolderInUse(dataDir, holder)
    if (holder === null && ageMs(file) < EMPTY_GRACE_MS) {
      sleep(20) // another process is writing its pid right now
      continue
    }
    breakStale(file, holder)
  }
  throw new Error(`could not lock data folder ${dataDir}: ${file} keeps changing`)
}
