/**
 * Retries for calls the service may answer on a later try: a network
 * failure (TransportError), a 5xx or a 429 (ServerError; its Retry-After is
 * the least to wait). Any other error, and the last attempt's, goes to the
 * caller. Only for calls that are safe to repeat (GETs, PUTs of the same
 * bytes, finalizes, result uploads, and opens with an Idempotency-Key).
 */
import { ConflictError, ServerError, TransportError } from './errors.ts'

/** How often, and how patiently, `retrying` tries. */
export interface RetryOptions {
  /** Tries in all, the first included (default 4; 1 never retries). */
  attempts?: number
  /** The wait before the second try, doubling after each (default 500 ms). */
  backoffMs?: number
  /** Waits between tries (default setTimeout); tests pass a fake. */
  sleep?: (ms: number) => Promise<void>
}

/** Whether `error` may pass on a later try; `keyed` also counts a 409 for a keyed request still running. */
export function isTransient(error: unknown, keyed = false): boolean {
  return error instanceof TransportError || error instanceof ServerError || (keyed && error instanceof ConflictError)
}

/** `call()`, tried again after a transient failure (see the module doc). */
export async function retrying<T>(call: () => Promise<T>, options: RetryOptions = {}, keyed = false): Promise<T> {
  const attempts = options.attempts ?? 4
  const backoffMs = options.backoffMs ?? 500
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  for (let attempt = 1;; attempt++) {
    try {
      return await call()
    } catch (error) {
      if (attempt >= attempts || !isTransient(error, keyed)) throw error
      const asked = error instanceof ServerError && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 0
      await sleep(Math.max(asked, backoffMs * 2 ** (attempt - 1)))
    }
  }
}
