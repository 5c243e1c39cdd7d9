/** The retry schedule: first retry within a minute, tripling, retries for 24 hours and not longer. */
import { describe, expect, it } from 'vitest'
import { nextAttemptAt, RETRY_WINDOW_MS, retryDelayMs } from './deliver.ts'

describe('webhook retry schedule', () => {
  it('retries first after 10 s, then triples up to 6 h', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([10_000, 30_000, 90_000, 270_000])
    expect(retryDelayMs(30)).toBe(6 * 3600_000)
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
