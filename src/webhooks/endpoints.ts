/**
 * Webhook endpoints of a client: the admin verbs `episodic webhooks add`,
 * `list` and `remove` (CLI only, never HTTP, as for keys). An endpoint gets a
 * Standard Webhooks secret, shown once when it is added.
 */
import type { AdminDeps } from '../admin/admin.ts'
import { iso, systemClock } from '../clock.ts'
import { toHex, webRandom } from '../crypto.ts'
import { EpisodicError } from '../errors.ts'
import { newSigningSecret } from './signature.ts'

/** A webhook endpoint as the admin verbs print it (its secret only once, on add). */
export interface WebhookInfo {
  /** `wh_` and 16 hex digits; the handle `remove` takes and the receiver sees nowhere. */
  webhook_id: string
  /** Name of the client whose events the endpoint receives. */
  client: string
  /** The absolute http(s) URL events are POSTed to. */
  url: string
  /** When the endpoint was added (ISO 8601 UTC). */
  created_at: string
}

type Deps = Pick<AdminDeps, 'db' | 'random' | 'clock'>

const URL_LIMIT = 2048

/** An absolute http(s) URL, or an `invalid` error that says what is wrong with it. */
export function checkWebhookUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new EpisodicError('invalid', `webhook URL must be an absolute http(s) URL (got "${text}")`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new EpisodicError('invalid', `webhook URL must use http or https (got "${url.protocol}")`)
  if (text.length > URL_LIMIT) throw new EpisodicError('invalid', `webhook URL must be at most ${URL_LIMIT} characters`)
  // What fetch() would refuse at every attempt, refused now: nothing could ever be delivered there.
  if (url.username || url.password) {
    throw new EpisodicError('invalid', 'webhook URL must not hold credentials (fetch refuses them; the signature authenticates each delivery)')
  }
  if (BAD_PORTS.has(url.port)) {
    throw new EpisodicError('invalid', `webhook URL port ${url.port} is one fetch() never connects to (the Fetch standard's bad ports); use another`)
  }
  return url.toString()
}

/** The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#port-blocking): every runtime's fetch refuses them. */
const BAD_PORTS = new Set(
  (
    '1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110 111 113 115 117 119 123 135 137 139 143 161 ' +
    '179 389 427 465 512 513 514 515 526 530 531 532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190 ' +
    '5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080'
  ).split(' '),
)

async function clientByName(deps: Deps, name: string): Promise<{ id: string; name: string }> {
  const row = await deps.db.selectFrom('clients').select(['id', 'name']).where('name', '=', name).executeTakeFirst()
  if (!row) throw new EpisodicError('not_found', `no client named "${name}"`)
  return row
}

/**
 * Adds an endpoint for a client. The returned `secret` (`whsec_...`) is what
 * the receiver verifies signatures with; it is shown once by the CLI.
 */
export async function addWebhook(deps: Pick<AdminDeps, 'db' | 'random' | 'clock'>, clientName: string, url: string): Promise<WebhookInfo & { secret: string }> {
  const checked = checkWebhookUrl(url)
  const client = await clientByName(deps, clientName)
  const random = deps.random ?? webRandom
  const now = (deps.clock ?? systemClock).now()
  const id = `wh_${toHex(random.bytes(8))}`
  const secret = newSigningSecret(random)
  await deps.db.insertInto('webhook_endpoints').values({ id, client_id: client.id, url: checked, secret, created_at: now }).execute()
  return { webhook_id: id, client: client.name, url: checked, created_at: now.toISOString(), secret }
}

/** A client's endpoints, oldest first (secrets are not shown again). */
export async function listWebhooks(deps: Pick<AdminDeps, 'db' | 'random' | 'clock'>, clientName: string): Promise<WebhookInfo[]> {
  const client = await clientByName(deps, clientName)
  const rows = await deps.db
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'created_at'])
    .where('client_id', '=', client.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map((r) => ({ webhook_id: r.id, client: client.name, url: r.url, created_at: iso(r.created_at) }))
}

/** Removes an endpoint and its pending and past deliveries. */
export async function removeWebhook(deps: Pick<AdminDeps, 'db' | 'random' | 'clock'>, webhookId: string): Promise<WebhookInfo> {
  const row = await deps.db
    .deleteFrom('webhook_endpoints')
    .where('id', '=', webhookId)
    .returning(['id', 'client_id', 'url', 'created_at'])
    .executeTakeFirst()
  if (!row) throw new EpisodicError('not_found', `no webhook with id "${webhookId}"`)
  const client = await deps.db.selectFrom('clients').select('name').where('id', '=', row.client_id).executeTakeFirst()
  return { webhook_id: row.id, client: client?.name ?? row.client_id, url: row.url, created_at: iso(row.created_at) }
}
