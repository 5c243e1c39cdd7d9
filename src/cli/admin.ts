/**
 * The admin verbs (`clients`, `keys`, `episodes archive`, `webhooks`) and how they reach
 * the database: through a running server's control socket on the embedded
 * default, otherwise by opening the configured database directly.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { adminCall } from '../admin/call.ts'
import type { EpisodicConfig } from '../config.ts'
import { openDatabase } from '../db/open.ts'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { DataFolderInUse, type DataLock, lockDataFolder } from '../../adapters/node/data-lock.ts'
import { usableDataFolder } from './data-folder.ts'
import { configError } from './exit.ts'
import { err } from './io.ts'
import { callRunningServer } from '../../adapters/node/control.ts'

/** How long an admin verb waits for a data folder another process holds (a server starting, another verb). */
export const HELD_FOLDER_WAIT_MS = 10_000
/** The same while the folder has no database yet: its holder is making one (12 s measured on a busy machine). */
const FRESH_FOLDER_WAIT_MS = 60_000

/**
 * Runs an admin verb against the configured database, or on the embedded
 * default through the running server. Never opens a data folder a live
 * process holds: with no server answering, the verb takes the folder's lock
 * itself (so no server starts on it meanwhile). A folder held by a process
 * that does not answer on a control socket (a server still opening its
 * database, another admin verb) is waited for, up to `waitMs`, then refused.
 */
export async function runAdmin(config: EpisodicConfig, verb: string, args: string[], waitMs = HELD_FOLDER_WAIT_MS): Promise<unknown> {
  let lock: DataLock | undefined
  if (!config.databaseUrl) {
    usableDataFolder(config.dataDir)
    // A holder making the folder's database (its first start, or a first verb) takes longer than one that opens it.
    const wait = existsSync(join(config.dataDir, 'db')) ? waitMs : Math.max(waitMs, FRESH_FOLDER_WAIT_MS)
    const deadline = Date.now() + wait
    for (;;) {
      const viaServer = await callRunningServer(config.dataDir, verb, args)
      if (viaServer) return viaServer.result
      try {
        lock = lockDataFolder(config.dataDir)
        break
      } catch (error) {
        if (!(error instanceof DataFolderInUse)) throw error
        // Every server on the folder opens a control socket once its database is up (createNodeApp).
        if (Date.now() >= deadline) {
          throw configError(
            `${error.message} (a server not answering on its control socket, or another admin verb), still after ${wait / 1000} s: ` +
              'stop it first, or use DATABASE_URL',
          )
        }
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
  }
  // A verb run from the wrong folder would otherwise answer "no client named ..." from a database it just made.
  const fresh = !config.databaseUrl && !existsSync(join(config.dataDir, 'db'))
  if (fresh) err(`note: no embedded database in ${config.dataDir} yet; creating one (is EPISODIC_DATA_DIR, or the folder you run this from, the server's?)`)
  try {
    const db = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : join(config.dataDir, 'db'),
      max: 1,
      // One command, a few rows: an embedded database opens faster with few buffers.
      sharedBuffers: '16MB',
    })
    try {
      return await adminCall({ db, sha256: NodeSha256 })(verb, args)
    } finally {
      await db.destroy()
    }
  } finally {
    lock?.release()
  }
}
