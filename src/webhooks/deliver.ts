/**
 * Sends due webhook deliveries from the outbox (at least once, with backoff
 * for 24 hours). Any number of instances may call `deliverWebhooks` at once:
 * each claims its rows with `FOR UPDATE SKIP LOCKED` and takes a lease on
 * them (their `next_attempt_at` moves past the attempt's timeout), so an
 * attempt is made by one instance only; when an instance dies mid-attempt,
 * the lease lapses and another one retries. Every attempt keeps the
 * delivery's `webhook-id` and body and is signed afresh at its own time.
 *
 * Takes its capabilities (database, fetch, clock) as options, so the same
 * function runs from the Node, Bun and Deno servers' timer (loop.ts) and from
 * a Worker's Cron Trigger.
 *
 * @example
 * const report = await deliverWebhooks({ db, fetch: globalThis.fetch })
 */
import { type Kysely, sql } from 'kysely'
import { type Clock, systemClock } from '../clock.ts'
import { type Random, toHex, webRandom } from '../crypto.ts'
import type { Database } from '../db/schema.ts'
import { truncateCodePoints, wellFormedText } from '../http/text.ts'
import { signedHeaders } from './signature.ts'

/** What this module uses of `fetch`. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

/**
 * Capabilities and limits of one {@link deliverWebhooks} call.
 *
 * @example
 * await deliverWebhooks({ db, fetch: globalThis.fetch, limit: 50, timeoutMs: 10_000 })
 */
export interface DeliverOptions {
  /** The service database holding the outbox and the endpoints. */
  db: Kysely<Database>
  /** Sends the signed POSTs; `globalThis.fetch` in every supported runtime. */
  fetch: FetchLike
  /** Decides what is due and stamps attempts; defaults to {@link systemClock}. */
  clock?: Clock
  /** Jitters the retry backoff; defaults to {@link webRandom}. */
  random?: Random
  /** Deliveries claimed (and sent concurrently) per call; default 20. */
  limit?: number
  /** An attempt that has no answer after this long fails as a timeout; default 15 s. */
  timeoutMs?: number
  /**
   * Aborts the attempts under way (a server shutting down): they are left
   * due at once, for this or another instance to send again.
   */
  signal?: AbortSignal
}

/** What one {@link deliverWebhooks} call did; `attempted === limit` means more may be due. */
export interface DeliveryReport {
  /** Attempts made by this call. */
  attempted: number
  /** Attempts the receiver answered with a 2xx: done. */
  delivered: number
  /** Failed attempts with a retry scheduled. */
  retrying: number
  /** Failed attempts after which the 24 hours were over: given up. */
  failed: number
  /** The batch was full (as many claimed as the limit allowed): more may be due now. */
  more: boolean
}

/** Retries stop once this long has passed since the event. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000
const FIRST_RETRY_MS = 10_000
const LONGEST_WAIT_MS = 6 * 60 * 60 * 1000
/** Extra lease beyond the timeout: room to record the outcome before another instance may retry. */
const LEASE_MARGIN_MS = 30_000
const ERROR_LIMIT = 500

/**
 * Share by which a wait is stretched or shrunk at random, so deliveries that
 * failed together (one receiver's outage) spread out instead of retrying in
 * the same second.
 */
export const RETRY_JITTER = 0.2

/**
 * Wait before the retry that follows attempt number `attempts` (1-based):
 * 10 s, 30 s, 90 s, 4.5 min, ... tripling up to 6 h, each moved by up to
 * ±{@link RETRY_JITTER} of itself as `jitter` (uniform in [0, 1)) goes from
 * 0 to 1; 0.5 gives the plain schedule.
 */
export function retryDelayMs(attempts: number, jitter = 0.5): number {
  const plain = Math.min(FIRST_RETRY_MS * 3 ** Math.max(0, attempts - 1), LONGEST_WAIT_MS)
  return Math.round(plain * (1 + RETRY_JITTER * (2 * jitter - 1)))
}

/**
 * When to try again after a failed attempt, or null when the 24 hours since
 * `createdAt` are over. The last retry falls exactly at the 24-hour mark.
 */
export function nextAttemptAt(createdAt: Date, attempts: number, now: Date, jitter = 0.5): Date | null {
  const deadline = createdAt.getTime() + RETRY_WINDOW_MS
  if (now.getTime() >= deadline) return null
  return new Date(Math.min(now.getTime() + retryDelayMs(attempts, jitter), deadline))
}

/** A uniform number in [0, 1) from four random bytes. */
function unitInterval(random: Random): number {
  const [a, b, c, d] = random.bytes(4)
  return (((a! << 24) >>> 0) + (b! << 16) + (c! << 8) + d!) / 2 ** 32
}

interface Claimed {
  id: string
  payload: string
  attempts: number
  created_at: Date | string
  url: string
  secret: string
}

type Outcome = { ok: true; status: number; interrupted?: never } | { ok: false; status: number | null; error: string; interrupted?: boolean }

/** Claims up to `limit` due deliveries and makes one attempt at each. */
export async function deliverWebhooks(options: DeliverOptions): Promise<DeliveryReport> {
  const clock = options.clock ?? systemClock
  const timeoutMs = options.timeoutMs ?? 15_000
  const limit = Math.max(1, Math.min(1000, Math.floor(options.limit ?? 20)))
  if (options.signal?.aborted) return { attempted: 0, delivered: 0, retrying: 0, failed: 0, more: false }
  const random = options.random ?? webRandom
  const token = toHex(random.bytes(16))
  const now = clock.now()
  const leaseUntil = new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS)
  // One statement, so the claim commits at once: the rows are locked only
  // while it runs, and the lease (next_attempt_at in the future) keeps other
  // instances off them while the attempt is under way.
  const claimed = await sql<Claimed>`
    with due as (
      select id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= ${now}
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    update webhook_deliveries d
    set lease_token = ${token}, next_attempt_at = ${leaseUntil}, attempts = d.attempts + 1, last_attempt_at = ${now}
    from due, webhook_endpoints e
    where d.id = due.id and e.id = d.endpoint_id
    returning d.id, d.payload, d.attempts, d.created_at, e.url, e.secret`.execute(options.db)

  const report: DeliveryReport = { attempted: claimed.rows.length, delivered: 0, retrying: 0, failed: 0, more: claimed.rows.length === limit }
  // One listener on the caller's signal for the whole batch, not one per attempt
  // (more than ten listeners on one signal make Node warn of a leak).
  const inFlight = new Set<AbortController>()
  const onStop = () => {
    for (const controller of inFlight) controller.abort()
  }
  options.signal?.addEventListener('abort', onStop)
  try {
    await Promise.all(claimed.rows.map((row) => deliverOne(row)))
  } finally {
    options.signal?.removeEventListener('abort', onStop)
  }
  return report

  async function deliverOne(row: Claimed): Promise<void> {
    const outcome = await attempt(options.fetch, row, clock.now(), timeoutMs, inFlight, options.signal)
    const after = clock.now()
    if (outcome.interrupted) {
      report.retrying++
      await settle(options.db, row.id, token, { status: 'pending', next_attempt_at: after, last_status: null, last_error: outcome.error })
      return
    }
    if (outcome.ok) {
      report.delivered++
      await settle(options.db, row.id, token, { status: 'delivered', delivered_at: after, last_status: outcome.status, last_error: null })
      return
    }
    const next = nextAttemptAt(new Date(row.created_at), row.attempts, after, unitInterval(random))
    if (next) report.retrying++
    else report.failed++
    await settle(options.db, row.id, token, {
      status: next ? 'pending' : 'failed',
      next_attempt_at: next ?? after,
      last_status: outcome.status,
      last_error: outcome.error,
    })
  }
}

/**
 * An error text PostgreSQL can store: a receiver's body may hold a NUL or
 * other control characters (text refuses NUL; had the update failed, the
 * delivery would be retried at each lease's end instead of on its backoff),
 * shown as U+FFFD, and at most ERROR_LIMIT characters, never half of one.
 */
export function storable(text: string): string {
  // deno-lint-ignore no-control-regex
  return truncateCodePoints(wellFormedText(text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd')), ERROR_LIMIT)
}

/** Records an attempt's outcome, unless the lease lapsed and another instance took the row over. */
async function settle(
  db: Kysely<Database>,
  id: string,
  token: string,
  values: { status: 'pending' | 'delivered' | 'failed'; next_attempt_at?: Date; delivered_at?: Date; last_status: number | null; last_error: string | null },
): Promise<void> {
  const last_error = values.last_error === null ? null : storable(values.last_error)
  await db
    .updateTable('webhook_deliveries')
    .set({ ...values, last_error, lease_token: null })
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .execute()
}

/** One signed POST; any 2xx is a success, anything else (redirects included) a failure. */
async function attempt(
  fetch: FetchLike,
  row: Claimed,
  at: Date,
  timeoutMs: number,
  inFlight: Set<AbortController>,
  stop?: AbortSignal,
): Promise<Outcome> {
  let headers: Record<string, string>
  try {
    headers = { 'content-type': 'application/json', 'user-agent': 'episodic-webhooks/1', ...(await signedHeaders(row.secret, row.id, at, row.payload)) }
  } catch (error) {
    // A secret that cannot sign (damaged in the database) fails this attempt, not the whole batch.
    return { ok: false, status: null, error: `cannot sign: ${describe(error)}` }
  }
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  inFlight.add(controller)
  if (stop?.aborted) controller.abort()
  try {
    const response = await fetch(row.url, { method: 'POST', headers, body: row.payload, redirect: 'manual', signal: controller.signal })
    if (response.status >= 200 && response.status < 300) {
      await response.body?.cancel().catch(() => {})
      return { ok: true, status: response.status }
    }
    const snippet = await readSnippet(response)
    return { ok: false, status: response.status, error: `HTTP ${response.status}${snippet ? `: ${snippet}` : ''}` }
  } catch (error) {
    if (stop?.aborted) return { ok: false, status: null, error: 'interrupted: the sending instance stopped', interrupted: true }
    if (controller.signal.aborted) return { ok: false, status: null, error: `no answer within ${timeoutMs / 1000} s` }
    return { ok: false, status: null, error: describe(error) }
  } finally {
    clearTimeout(timer)
    inFlight.delete(controller)
  }
}

/** The first few hundred characters of a failed answer's body (the receiver's own words). */
async function readSnippet(response: Response): Promise<string> {
  const reader = response.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size < ERROR_LIMIT) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.length
    }
  } catch {
    // A body cut short still tells us the status.
  } finally {
    await reader.cancel().catch(() => {})
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return new TextDecoder().decode(bytes).replace(/\s+/g, ' ').trim().slice(0, 200)
}

/** A network error's message with its cause (fetch says "fetch failed" and puts ECONNREFUSED in the cause). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? error.cause.message : undefined
  return cause && cause !== error.message ? `${error.message}: ${cause}` : error.message
}
