/**
 * The transactional outbox: an event becomes one `webhook_deliveries` row per
 * endpoint of the client, written by the same transaction that makes the
 * event happen, so a committed finalize always has its deliveries and a
 * rolled-back one never does. `deliverWebhooks` (deliver.ts) sends them.
 */
import type { Kysely } from 'kysely'
import { type Random, toHex, webRandom } from '../crypto.ts'
import type { Database } from '../db/schema.ts'

export const EVAL_RUN_COMPLETED = 'eval_run.completed'

export interface EvalRunCompleted {
  evalRunId: string
  clientId: string
  /** The stored rollup summary, sent as `data.summary`. */
  summary: unknown
  /** When the run was finalized: the body's `created_at`, and when the first attempt is due. */
  now: Date
  random?: Random
}

/** A new delivery id (`webhook-id` header and the body's `id`). */
export function newDeliveryId(random: Random): string {
  return `msg_${toHex(random.bytes(16))}`
}

/**
 * Queues `eval_run.completed` for every endpoint of the run's client. Call it
 * inside the finalize transaction (`trx`), once, when the run is completed
 * for the first time; a second call for the same run adds nothing (one row
 * per run and endpoint).
 *
 * @example
 * await enqueueEvalRunCompleted(trx, { evalRunId, clientId, summary, now })
 */
export async function enqueueEvalRunCompleted(trx: Kysely<Database>, event: EvalRunCompleted): Promise<number> {
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .innerJoin('eval_runs', 'eval_runs.client_id', 'webhook_endpoints.client_id')
    .select(['webhook_endpoints.id as endpoint_id', 'eval_runs.name', 'eval_runs.candidate_policy_version', 'eval_runs.baseline_policy_version'])
    .where('eval_runs.id', '=', event.evalRunId)
    .where('eval_runs.client_id', '=', event.clientId)
    .execute()
  if (endpoints.length === 0) return 0
  const random = event.random ?? webRandom
  const createdAt = event.now.toISOString()
  const rows = endpoints.map((e) => {
    const id = newDeliveryId(random)
    const payload = JSON.stringify({
      type: EVAL_RUN_COMPLETED,
      id,
      created_at: createdAt,
      data: {
        eval_run_id: event.evalRunId,
        name: e.name,
        candidate_policy_version: e.candidate_policy_version,
        baseline_policy_version: e.baseline_policy_version,
        summary: event.summary,
      },
    })
    return {
      id,
      endpoint_id: e.endpoint_id,
      event_type: EVAL_RUN_COMPLETED,
      eval_run_id: event.evalRunId,
      payload,
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: event.now,
      created_at: event.now,
    }
  })
  const inserted = await trx
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['endpoint_id', 'event_type', 'eval_run_id']).doNothing())
    .returning('id')
    .execute()
  return inserted.length
}
