import { describe, expect, it } from 'vitest'
import { batched, type Defer } from './batch.ts'

/** A `defer` the test fires by hand, recording each batch `run` receives. */
function harness(run: (items: number[]) => Promise<string[]>, maxBatch?: number) {
  let flushes: Array<() => void> = []
  const batches: number[][] = []
  const defer: Defer = (flush) => void flushes.push(flush)
  const write = batched({
    defer,
    maxBatch,
    run: (items: number[]) => {
      batches.push(items)
      return run(items)
    },
  })
  const turn = async () => {
    const due = flushes
    flushes = []
    for (const flush of due) flush()
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
  return { write, batches, turn, scheduled: () => flushes.length }
}

const echo = (items: number[]) => Promise.resolve(items.map((n) => `r${n}`))

describe('batched', () => {
  it('writes the calls of one turn as one batch, and answers each caller with its own result', async () => {
    const h = harness(echo)
    const replies = [h.write(1), h.write(2), h.write(3)]
    expect(h.scheduled()).toBe(1) // one flush for the whole turn
    expect(h.batches).toEqual([])
    await h.turn()
    expect(h.batches).toEqual([[1, 2, 3]])
    expect(await Promise.all(replies)).toEqual(['r1', 'r2', 'r3'])
  })

  it('starts a new batch for calls made after the flush', async () => {
    const h = harness(echo)
    const first = h.write(1)
    await h.turn()
    const second = [h.write(2), h.write(3)]
    await h.turn()
    expect(h.batches).toEqual([[1], [2, 3]])
    expect(await first).toBe('r1')
    expect(await Promise.all(second)).toEqual(['r2', 'r3'])
  })

  it('splits a turn larger than maxBatch', async () => {
    const h = harness(echo, 2)
    const replies = [1, 2, 3, 4, 5].map((n) => h.write(n))
    await h.turn()
    expect(h.batches).toEqual([[1, 2], [3, 4], [5]])
    expect(await Promise.all(replies)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5'])
  })

  it('retries a failed batch one item at a time, so only the refused item fails', async () => {
    const h = harness((items) => (items.includes(2) ? Promise.reject(new Error(`refused ${items.join(',')}`)) : Promise.resolve(items.map((n) => `r${n}`))))
    const replies = [1, 2, 3].map((n) => h.write(n).then((r) => r, (error: Error) => error.message))
    await h.turn()
    expect(await Promise.all(replies)).toEqual(['r1', 'refused 2', 'r3'])
    expect(h.batches).toEqual([[1, 2, 3], [1], [2], [3]])
  })

  it('treats a wrong number of results as a failed batch', async () => {
    const h = harness((items) => Promise.resolve(items.slice(0, 1).map((n) => `r${n}`)))
    const replies = [h.write(1), h.write(2)]
    await h.turn()
    expect(await Promise.all(replies)).toEqual(['r1', 'r2'])
    expect(h.batches).toEqual([[1, 2], [1], [2]])
  })

  it('rejects a lone failing call with the error of its write', async () => {
    const h = harness(() => Promise.reject(new Error('database down')))
    const reply = h.write(1).then(() => 'resolved', (error: Error) => error.message)
    await h.turn()
    expect(await reply).toBe('database down')
  })
})
