import { describe, expect, it } from 'vitest'
import { parseInstant } from './time-param.ts'

describe('parseInstant', () => {
  it('reads dates as midnight UTC and zone-less date-times as UTC', () => {
    expect(parseInstant('2026-05-01')?.toISOString()).toBe('2026-05-01T00:00:00.000Z')
    expect(parseInstant('2026-05-01T12:30')?.toISOString()).toBe('2026-05-01T12:30:00.000Z')
    expect(parseInstant('2026-05-01 12:30:15.5')?.toISOString()).toBe('2026-05-01T12:30:15.500Z')
    expect(parseInstant('2026-05-01T14:00:00+02:00')?.toISOString()).toBe('2026-05-01T12:00:00.000Z')
    expect(parseInstant('2026-05-01T12:00:00Z')?.toISOString()).toBe('2026-05-01T12:00:00.000Z')
  })

  it('refuses what is not a date', () => {
    for (const bad of ['', 'yesterday', '2026-13-01', '2026-02-31', '2026-05-01T25:00', '1714560000', '2026-5-1']) {
      expect(parseInstant(bad), bad).toBeNull()
    }
  })
})
