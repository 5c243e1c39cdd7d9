/** Human (or `--json`) output of the admin verbs. */
import type { ClientInfo, KeyInfo } from '../admin/admin.ts'

export function printAdminResult(verb: string, result: unknown, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(result, null, 2))
    return
  }
  switch (verb) {
    case 'clients.create': {
      const c = result as ClientInfo
      console.log(`created client "${c.name}" (id ${c.id})`)
      console.log(`next: episodic keys create --client ${c.name}`)
      return
    }
    case 'clients.list':
      for (const c of result as ClientInfo[]) console.log(`${c.name}\t${c.id}\tcreated ${c.created_at}`)
      return
    case 'keys.create': {
      const k = result as KeyInfo & { key: string }
      console.log(`API key for client "${k.client}" (shown once, store it now):\n\n  ${k.key}\n`)
      console.log(`key id: ${k.key_id} (use it with: episodic keys revoke ${k.key_id})`)
      return
    }
    case 'keys.list':
      for (const k of result as KeyInfo[]) {
        console.log(`${k.key_id}\tcreated ${k.created_at}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`)
      }
      return
    case 'keys.revoke': {
      const k = result as KeyInfo
      console.log(`revoked key ${k.key_id} of client "${k.client}" at ${k.revoked_at}`)
      return
    }
    case 'episodes.archive': {
      const e = result as { episode_id: string; previous_status: string }
      console.log(`archived episode ${e.episode_id} (was ${e.previous_status})`)
      return
    }
    default:
      console.log(result)
  }
}
