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

  it('refuses a day the month does not have, with or without a time', () => {
    for (const bad of ['2026-02-29', '2026-02-30T00:00Z', '2026-02-31T12:00:00+02:00', '2026-04-31T10:00', '2100-02-29T00:00Z']) {
      expect(parseInstant(bad), bad).toBeNull()
    }
    expect(parseInstant('2024-02-29T12:00Z')?.toISOString()).toBe('2024-02-29T12:00:00.000Z')
    expect(parseInstant('2000-02-29')?.toISOString()).toBe('2000-02-29T00:00:00.000Z')
    expect(parseInstant('2026-12-31T23:59:59Z')?.toISOString()).toBe('2026-12-31T23:59:59.000Z')
  })

  it('refuses instants outside years 0001..9999 UTC, which PostgreSQL cannot take', () => {
    for (const bad of ['0000-01-01', '0000-12-31T23:59:59Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-05:00']) {
      expect(parseInstant(bad), bad).toBeNull()
    }
    expect(parseInstant('0001-01-01')?.toISOString()).toBe('0001-01-01T00:00:00.000Z')
    expect(parseInstant('0000-12-31T23:00:00-01:00')?.toISOString()).toBe('0001-01-01T00:00:00.000Z')
    expect(parseInstant('9999-12-31T23:59:59.999Z')?.toISOString()).toBe('9999-12-31T23:59:59.999Z')
  })
})
