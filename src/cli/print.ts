/** Human (or `--json`) output of the admin verbs. */
import type { ClientInfo, KeyInfo } from '../admin/admin.ts'
import type { WebhookInfo } from '../webhooks/endpoints.ts'
import { out } from './io.ts'
import { jsonText } from '../http/json.ts'

export function printAdminResult(verb: string, result: unknown, json: boolean): void {
  if (json) {
    out(jsonText(result, 2))
    return
  }
  switch (verb) {
    case 'clients.create': {
      const c = result as ClientInfo
      out(`created client "${c.name}" (id ${c.id})`)
      out(`next: episodic keys create --client ${c.name}`)
      return
    }
    case 'clients.list':
      for (const c of result as ClientInfo[]) out(`${c.name}\t${c.id}\tcreated ${c.created_at}`)
      return
    case 'keys.create': {
      const k = result as KeyInfo & { key: string }
      out(`API key for client "${k.client}" (shown once, store it now):\n\n  ${k.key}\n`)
      out(`key id: ${k.key_id} (use it with: episodic keys revoke ${k.key_id})`)
      return
    }
    case 'keys.list':
      for (const k of result as KeyInfo[]) {
        out(`${k.key_id}\tcreated ${k.created_at}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`)
      }
      return
    case 'keys.revoke': {
      const k = result as KeyInfo
      out(`revoked key ${k.key_id} of client "${k.client}" at ${k.revoked_at}`)
      return
    }
    case 'episodes.archive': {
      const e = result as { episode_id: string; previous_status: string }
      out(`archived episode ${e.episode_id} (was ${e.previous_status})`)
      return
    }
    case 'webhooks.add': {
      const w = result as WebhookInfo & { secret: string }
      out(`webhook ${w.webhook_id} of client "${w.client}" -> ${w.url}`)
      out(`signing secret (shown once, give it to the receiver now):\n\n  ${w.secret}\n`)
      out(`remove it with: episodic webhooks remove ${w.webhook_id}`)
      return
    }
    case 'webhooks.list':
      for (const w of result as WebhookInfo[]) out(`${w.webhook_id}\t${w.url}\tcreated ${w.created_at}`)
      return
    case 'webhooks.remove': {
      const w = result as WebhookInfo
      out(`removed webhook ${w.webhook_id} (${w.url}) of client "${w.client}"`)
      return
    }
    default:
      out(result)
  }
}
