/**
 * What a client may see of its webhooks: each endpoint (never its secret)
 * with its most recent deliveries, for the portal's webhooks page.
 */
import type { Kysely } from 'kysely'
import type { Database, WebhookDeliveryStatus } from '../db/schema.ts'
import { iso } from '../clock.ts'

export interface DeliveryView {
  delivery_id: string
  event_type: string
  eval_run_id: string | null
  status: WebhookDeliveryStatus
  attempts: number
  /** HTTP status of the last answer; null before the first attempt or when none came. */
  last_status: number | null
  last_error: string | null
  created_at: string
  last_attempt_at: string | null
  /** For pending deliveries: when the next attempt is due. */
  next_attempt_at: string | null
  delivered_at: string | null
}

export interface EndpointView {
  webhook_id: string
  url: string
  created_at: string
  deliveries: DeliveryView[]
}

const isoOrNull = (value: Date | string | null) => (value === null ? null : iso(value))

/** The client's endpoints, oldest first, each with its `perEndpoint` newest deliveries. */
export async function listEndpointDeliveries(db: Kysely<Database>, clientId: string, perEndpoint = 20): Promise<EndpointView[]> {
  const endpoints = await db
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'created_at'])
    .where('client_id', '=', clientId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  const views: EndpointView[] = []
  for (const e of endpoints) {
    const rows = await db
      .selectFrom('webhook_deliveries')
      .select([
        'id',
        'event_type',
        'eval_run_id',
        'status',
        'attempts',
        'last_status',
        'last_error',
        'created_at',
        'last_attempt_at',
        'next_attempt_at',
        'delivered_at',
      ])
      .where('endpoint_id', '=', e.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(perEndpoint)
      .execute()
    views.push({
      webhook_id: e.id,
      url: e.url,
      created_at: iso(e.created_at),
      deliveries: rows.map((r) => ({
        delivery_id: r.id,
        event_type: r.event_type,
        eval_run_id: r.eval_run_id,
        status: r.status,
        attempts: r.attempts,
        last_status: r.last_status,
        last_error: r.last_error,
        created_at: iso(r.created_at),
        last_attempt_at: isoOrNull(r.last_attempt_at),
        next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
        delivered_at: isoOrNull(r.delivered_at),
      })),
    })
  }
  return views
}
