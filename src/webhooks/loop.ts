/**
 * Drives `deliverWebhooks` on an interval for long-running servers (the Node,
 * Bun and Deno adapters start one per app). A pass drains everything that is
 * due before waiting again; passes never overlap; a failing pass (database
 * down) is logged and the next one tries again. Workers use a Cron Trigger
 * instead (adapters/workers).
 *
 * @example
 * const delivery = startWebhookDelivery({ db, fetch: globalThis.fetch, intervalMs: 5000 })
 * await delivery.stop()
 */
import type { Logger } from '../context.ts'
import { type DeliverOptions, deliverWebhooks } from './deliver.ts'

/** {@link DeliverOptions} (the loop owns the abort signal) plus the pace and where failed passes are logged. */
export interface WebhookLoopOptions extends Omit<DeliverOptions, 'signal'> {
  /** Pause between passes (default 5 s). */
  intervalMs?: number
  /** Receives a failing pass's error (database down, ...); without one, failures are silent and retried. */
  logger?: Pick<Logger, 'error'>
}

/** A running delivery loop, as {@link startWebhookDelivery} returns it. */
export interface WebhookLoop {
  /** Runs a pass now (or waits for the running one), e.g. right after an event. */
  poke(): Promise<void>
  /** Stops the timer, interrupts the attempts under way (they stay due) and waits for the pass to record them. */
  stop(): Promise<void>
}

/** Starts the loop; the first pass runs at once. */
export function startWebhookDelivery(options: WebhookLoopOptions): WebhookLoop {
  const intervalMs = options.intervalMs ?? 5000
  const limit = options.limit ?? 20
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> | undefined
  const stopping = new AbortController()

  const pass = async () => {
    try {
      // Drain: a full batch means more may be due.
      while (!stopped && (await deliverWebhooks({ ...options, limit, signal: stopping.signal })).more) {
        // The condition is the pass; the body has nothing left to do.
      }
    } catch (error) {
      if (!stopped) options.logger?.error('webhook delivery pass failed', error)
    }
  }
  const run = (): Promise<void> => {
    if (running) return running
    if (timer) clearTimeout(timer)
    running = pass().finally(() => {
      running = undefined
      if (!stopped) timer = setTimeout(run, intervalMs)
    })
    return running
  }
  void run()
  return {
    poke: () => (stopped ? Promise.resolve() : run()),
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      stopping.abort()
      await running
    },
  }
}
