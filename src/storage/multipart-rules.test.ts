/** The part plan S3 accepts: the default part size grows only where 64 MiB parts would exceed 10,000. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_PART_SIZE, defaultPartSize, MAX_OBJECT_SIZE, MAX_PART_SIZE, MAX_PARTS, partCount } from './multipart-rules.ts'

const MiB = 1024 * 1024

describe('defaultPartSize', () => {
  it('is 64 MiB up to 10,000 parts of it (625 GiB), then the fewest whole MiB within 10,000 parts', () => {
    for (const size of [0, 1, 64 * MiB, MAX_PARTS * DEFAULT_PART_SIZE]) expect(defaultPartSize(size)).toBe(DEFAULT_PART_SIZE)
    expect(defaultPartSize(MAX_PARTS * DEFAULT_PART_SIZE + 1)).toBe(65 * MiB)
    expect(defaultPartSize(MAX_OBJECT_SIZE)).toBe(525 * MiB)
  })

  it('keeps every size up to 5 TiB within 10,000 parts of at most 5 GiB', () => {
    for (let size = DEFAULT_PART_SIZE; size <= MAX_OBJECT_SIZE; size = Math.ceil(size * 1.37)) {
      const part = defaultPartSize(size)
      expect(partCount(size, part), `${size}`).toBeLessThanOrEqual(MAX_PARTS)
      expect(part % MiB).toBe(0)
      expect(part).toBeLessThanOrEqual(MAX_PART_SIZE)
    }
    expect(partCount(MAX_OBJECT_SIZE, defaultPartSize(MAX_OBJECT_SIZE))).toBe(9987)
  })
})
