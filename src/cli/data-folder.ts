/**
 * The data folder (`EPISODIC_DATA_DIR`) checked before anything opens it: a
 * path that is a file, lies under one, or cannot be written by this user is
 * one line naming the variable (exit 3), not a stack trace from deep inside
 * the lock or the database.
 */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { DATA_FOLDER_MODE } from '../../adapters/node/data-lock.ts'
import { configError } from './exit.ts'

/** Creates `dir` if needed and checks this user can write in it; throws a configuration error naming `EPISODIC_DATA_DIR`. */
export function usableDataFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: DATA_FOLDER_MODE })
    accessSync(dir, constants.W_OK | constants.X_OK)
    // A folder another user made: its database (and secrets) must be this user's to write too.
    for (const inside of ['db', 'session.secret', 'storage.secret']) {
      if (existsSync(join(dir, inside))) accessSync(join(dir, inside), constants.R_OK | constants.W_OK)
    }
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException
    const why = code === 'EEXIST'
      ? 'is a file, not a folder'
      : code === 'ENOTDIR'
      ? 'lies under a file, not a folder'
      : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
      ? 'cannot be created or written by this user (or holds files another user owns)'
      : `cannot be used (${message})`
    throw configError(`data folder ${dir} ${why}; set EPISODIC_DATA_DIR to a folder this user can write`)
  }
}
