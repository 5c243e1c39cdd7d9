/**
 * Claims between processes sharing a folder: a file created exclusively
 * that holds its owner's pid, as the multipart uploads use for a part's slot
 * and for a completion (files-multipart.ts). A claim whose process died
 * counts as free, so a crash never holds anything for ever.
 *
 * @example
 * if (!(await claim(join(folder, '.completing'), true))) throw busy()
 * try { ... } finally { await rm(join(folder, '.completing'), { force: true }) }
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises'
import { processAlive } from './data-lock.ts'

/**
 * An empty claim older than this was left by a process that died between
 * creating it and writing its pid (a few bytes, written at once): far longer
 * than that takes on a loaded machine, short enough for a client's retries.
 */
const EMPTY_CLAIM_GRACE_MS = 10_000

/**
 * Creates `path` holding our pid; false when another holds it. With
 * `takeOverDead`, a claim whose process died is removed and claimed again.
 * Throws what creating the file throws otherwise (ENOENT: no such folder).
 */
export async function claim(path: string, takeOverDead: boolean): Promise<boolean> {
  try {
    await writeFile(path, String(process.pid), { flag: 'wx' })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  if (!takeOverDead || (await heldByLiveProcess(path))) return false
  // Left by a process that died mid-completion. Two requests taking it over at
  // the same instant could both win; completing the same upload twice at once
  // after a crash is the one case this does not order.
  await rm(path, { force: true })
  return await claim(path, false)
}

/** True when the claim at `path` exists and its process is alive (or still writing its pid). */
export async function heldByLiveProcess(path: string): Promise<boolean> {
  const text = await readFile(path, 'utf8').catch(() => null)
  if (text === null) return false
  if (text !== '') return processAlive(Number(text))
  // Empty: its writer is between creating the file and writing its pid, or
  // died there; counted live for ever, it would refuse every completion.
  const info = await stat(path).catch(() => null)
  return info !== null && Date.now() - info.mtimeMs < EMPTY_CLAIM_GRACE_MS
}
