/**
 * The admin verbs (`clients`, `keys`, `episodes archive`) and how they reach
 * the database: through a running server's control socket on the embedded
 * default, otherwise by opening the configured database directly.
 */
import { join } from 'node:path'
import {
  archiveEpisode,
  createClient,
  createKey,
  listClients,
  listKeys,
  revokeKey,
  type AdminDeps,
} from '../admin/admin.ts'
import type { EpisodicConfig } from '../config.ts'
import { openDatabase } from '../db/open.ts'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { callRunningServer, type AdminCall } from './control.ts'

/** Verb name -> admin function, shared by the direct path and the control socket. */
export function adminCall(deps: AdminDeps, onRevoke?: (keyId: string) => void): AdminCall {
  return async (verb, args) => {
    const [first = ''] = args
    switch (verb) {
      case 'clients.create':
        return createClient(deps, first)
      case 'clients.list':
        return listClients(deps)
      case 'keys.create':
        return createKey(deps, first)
      case 'keys.list':
        return listKeys(deps, first)
      case 'keys.revoke': {
        const result = await revokeKey(deps, first)
        onRevoke?.(first)
        return result
      }
      case 'episodes.archive':
        return archiveEpisode(deps, first)
      default:
        throw new Error(`unknown admin verb ${verb}`)
    }
  }
}

/** Runs an admin verb against the configured database (or the running server). */
export async function runAdmin(config: EpisodicConfig, verb: string, args: string[]): Promise<unknown> {
  if (!config.databaseUrl) {
    const viaServer = await callRunningServer(config.dataDir, verb, args)
    if (viaServer) return viaServer.result
  }
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
}
