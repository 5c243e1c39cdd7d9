import { describe, expect, it } from 'vitest'
import { BufferPool } from './buffer-pool.ts'

describe('BufferPool', () => {
  it('gives a returned buffer out again for a body that fits, as a view of exactly that length', () => {
    const pool = new BufferPool(1 << 20)
    const first = pool.take(1000)
    expect(first.length).toBe(1000)
    pool.release(first)
    const second = pool.take(900)
    expect(second.buffer).toBe(first.buffer)
    expect(second.length).toBe(900)
    // Taken: the next one is new.
    expect(pool.take(900).buffer).not.toBe(first.buffer)
  })

  it('picks the smallest free buffer that fits and never one far too big', () => {
    const pool = new BufferPool(1 << 30)
    const big = pool.take(4 << 20)
    const small = pool.take(1 << 20)
    pool.release(big)
    pool.release(small)
    expect(pool.take(900_000).buffer).toBe(small.buffer)
    // 4 MiB for a 1 KiB body would hold 4 MiB for a small file: a new buffer instead.
    expect(pool.take(1024).buffer).not.toBe(big.buffer)
    expect(pool.take(3 << 20).buffer).toBe(big.buffer)
  })

  it('keeps at most its byte budget, ignores buffers it did not give out and a second release', () => {
    const pool = new BufferPool(1500)
    const a = pool.take(1000)
    const b = pool.take(1000)
    pool.release(a)
    pool.release(b) // over the budget: dropped
    pool.release(a) // already free
    pool.release(new Uint8Array(1000)) // not the pool's
    expect(pool.take(1000).buffer).toBe(a.buffer)
    expect(pool.take(1000).buffer).not.toBe(b.buffer)
  })
})
