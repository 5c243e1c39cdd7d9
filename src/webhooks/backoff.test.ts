/** The retry schedule: first retry within a minute, tripling, retries for 24 hours and not longer. */
import { describe, expect, it } from 'vitest'
import { nextAttemptAt, RETRY_WINDOW_MS, retryDelayMs } from './deliver.ts'

describe('webhook retry schedule', () => {
  it('retries first after 10 s, then triples up to 6 h', () => {
    expect([1, 2, 3, 4].map((attempts) => retryDelayMs(attempts))).toEqual([10_000, 30_000, 90_000, 270_000])
    expect(retryDelayMs(30)).toBe(6 * 3600_000)
  })

  it('moves each wait by up to 20% at random, the first retry still within a minute', () => {
    expect(retryDelayMs(1, 0)).toBe(8_000)
    expect(retryDelayMs(1, 0.999999)).toBe(12_000)
    expect(retryDelayMs(3, 0.25)).toBe(81_000)
    expect(retryDelayMs(30, 0)).toBe(4.8 * 3600_000)
    const created = new Date('2030-01-01T00:00:00Z')
    const spread = [0, 0.3, 0.7, 0.99].map((jitter) => nextAttemptAt(created, 1, created, jitter)!.getTime() - created.getTime())
    expect(new Set(spread).size).toBe(4)
    for (const wait of spread) expect(wait).toBeLessThan(60_000)
    // The last retry still falls at the 24-hour mark, whatever the draw.
    const late = new Date(created.getTime() + RETRY_WINDOW_MS - 1000)
    expect(nextAttemptAt(created, 12, late, 0.99)!.getTime() - created.getTime()).toBe(RETRY_WINDOW_MS)
  })

  it('keeps trying for 24 hours, the last try at the 24-hour mark, then gives up', () => {
    const created = new Date('2030-01-01T00:00:00Z')
    let now = created
    const tries: Date[] = [now]
    for (let attempts = 1;; attempts++) {
      const next = nextAttemptAt(created, attempts, now)
      if (!next) break
      expect(next.getTime()).toBeGreaterThan(now.getTime())
      tries.push(now = next)
    }
    expect(tries[1]!.getTime() - created.getTime()).toBeLessThan(60_000)
    expect(tries.at(-1)!.getTime() - created.getTime()).toBe(RETRY_WINDOW_MS)
    expect(tries.length).toBeGreaterThan(8)
    expect(tries.length).toBeLessThan(20)
  })
})
