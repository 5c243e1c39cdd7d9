/**
 * Time as a capability: the core never calls `Date.now()` directly, so tests
 * can move time (for example past a signed URL's expiry).
 *
 * @example
 * const clock: Clock = { now: () => new Date('2030-01-01T00:00:00Z') }
 */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }
