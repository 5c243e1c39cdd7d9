/**
 * The admin verbs (`clients`, `keys`, `episodes archive`, `webhooks`) and how they reach
 * the database: through a running server's control socket on the embedded
 * default, otherwise by opening the configured database directly.
 */
import { join } from 'node:path'
import { type AdminDeps, archiveEpisode, createClient, createKey, listClients, listKeys, revokeKey } from '../admin/admin.ts'
import type { EpisodicConfig } from '../config.ts'
import { openDatabase } from '../db/open.ts'
import { addWebhook, listWebhooks, removeWebhook } from '../webhooks/endpoints.ts'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { DataFolderInUse, type DataLock, lockDataFolder } from '../../adapters/node/data-lock.ts'
import { configError } from './exit.ts'
import { type AdminCall, callRunningServer } from './control.ts'

/**
 * Verb name -> admin function, shared by the direct path and the control
 * socket. `onKeyChange` hears of every key created or revoked, so a server
 * drops it from its caches (a revoked key, or an id it remembered as unknown).
 */
export function adminCall(deps: AdminDeps, onKeyChange?: (keyId: string) => void): AdminCall {
  return async (verb, args) => {
    const [first = ''] = args
    switch (verb) {
      case 'clients.create':
        return createClient(deps, first)
      case 'clients.list':
        return listClients(deps)
      case 'keys.create': {
        const created = await createKey(deps, first)
        onKeyChange?.(created.key_id)
        return created
      }
      case 'keys.list':
        return listKeys(deps, first)
      case 'keys.revoke': {
        const result = await revokeKey(deps, first, args[1])
        onKeyChange?.(first)
        return result
      }
      case 'episodes.archive':
        return archiveEpisode(deps, first)
      case 'webhooks.add':
        return addWebhook(deps, first, args[1] ?? '')
      case 'webhooks.list':
        return listWebhooks(deps, first)
      case 'webhooks.remove':
        return removeWebhook(deps, first)
      default:
        throw new Error(`unknown admin verb ${verb}`)
    }
  }
}

/**
 * Runs an admin verb against the configured database, or on the embedded
 * default through the running server. Never opens a data folder a live
 * process holds: with no server answering, the verb takes the folder's lock
 * itself (so no server starts on it meanwhile), or refuses.
 */
export async function runAdmin(config: EpisodicConfig, verb: string, args: string[]): Promise<unknown> {
  let lock: DataLock | undefined
  if (!config.databaseUrl) {
    const viaServer = await callRunningServer(config.dataDir, verb, args)
    if (viaServer) return viaServer.result
    try {
      lock = lockDataFolder(config.dataDir)
    } catch (error) {
      // Only `episodic serve` opens a control socket; a server started from the library
      // (Deno, Bun, a Node program of your own) holds the folder without one.
      if (error instanceof DataFolderInUse) {
        throw configError(
          `${error.message}, which has no control socket: if it is \`episodic serve\` starting, try again in a moment; ` +
            'a server started from the library (Deno, Bun, your own Node program) must be stopped first, or use DATABASE_URL',
        )
      }
      throw error
    }
  }
  try {
    const db = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : join(config.dataDir, 'db'),
      max: 1,
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
