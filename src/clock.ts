/**
 * Time as a capability: the core never calls `Date.now()` directly, so tests
 * can move time (for example past a signed URL's expiry).
 *
 * @example
 * const clock: Clock = { now: () => new Date('2030-01-01T00:00:00Z') }
 */
export interface Clock {
  /** The current instant; called once per operation that stamps or compares a time. */
  now(): Date
}

/** The wall clock (`new Date()`), the default wherever a `clock` option is left out. */
export const systemClock: Clock = { now: () => new Date() }

/** ISO 8601 UTC with milliseconds, as every timestamp on the wire. */
export function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString()
}
