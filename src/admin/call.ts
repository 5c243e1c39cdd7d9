/**
 * The admin verbs by name (`clients.create`, `keys.revoke`, ...), as the CLI
 * runs them on a database it opened and as a server runs them for the CLI
 * through its control socket (adapters/node/control.ts).
 */
import { type AdminDeps, archiveEpisode, createClient, createKey, listClients, listKeys, revokeKey } from './admin.ts'
import { addWebhook, listWebhooks, removeWebhook } from '../webhooks/endpoints.ts'

/** Runs one admin verb with its string arguments. */
export type AdminCall = (verb: string, args: string[]) => Promise<unknown>

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
