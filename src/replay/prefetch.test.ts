import { describe, expect, it } from 'vitest'
import { Prefetcher } from './prefetch.ts'

/** A loader whose downloads finish when the test says so. */
function controlled() {
  const started: number[] = []
  const finish = new Map<number, (size: number) => void>()
  const load = (i: number) => {
    started.push(i)
    return new Promise<number>((resolve) => finish.set(i, resolve))
  }
  return { started, finish, load }
}

const tick = () => new Promise((r) => setTimeout(r, 0))

describe('Prefetcher', () => {
  it('reads ahead up to the episode limit while nothing is taken', async () => {
    const { started, finish, load } = controlled()
    const ahead = new Prefetcher(load, (n) => n, 10, { bytes: 1e9, episodes: 3 })
    const first = ahead.take(0)
    expect(started).toEqual([0, 1, 2, 3])
    finish.get(0)!(100)
    expect(await first).toBe(100)
  })

  it('stops starting downloads once fetched-but-untaken bytes reach the budget', async () => {
    const { started, finish, load } = controlled()
    const ahead = new Prefetcher(load, (n) => n, 10, { bytes: 250, episodes: 8 })
    void ahead.take(0)
    // Nothing is known about sizes yet, so the read-ahead goes to the episode limit.
    expect(started.length).toBe(9)
    for (let i = 0; i <= 8; i++) finish.get(i)!(100)
    await tick()
    // 8 untaken episodes of 100 bytes are over the 250-byte budget: nothing more starts.
    expect(started.length).toBe(9)
    for (let i = 1; i <= 6; i++) void ahead.take(i)
    await tick()
    // Two untaken (200 bytes) plus one in flight estimated at 100 reaches 250+: one more only.
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  })

  it('always fetches the item a worker needs, whatever the budget', async () => {
    const { started, finish, load } = controlled()
    const ahead = new Prefetcher(load, (n) => n, 3, false)
    const first = ahead.take(0)
    expect(started).toEqual([0])
    finish.get(0)!(5)
    await first
    const second = ahead.take(1)
    expect(started).toEqual([0, 1])
    finish.get(1)!(5)
    expect(await second).toBe(5)
  })

  it('hands a failed download to its taker and keeps going', async () => {
    let calls = 0
    const ahead = new Prefetcher(
      (i) => {
        calls++
        return i === 1 ? Promise.reject(new Error('gone')) : Promise.resolve(i)
      },
      () => 1,
      3,
      { episodes: 1 },
    )
    expect(await ahead.take(0)).toBe(0)
    await expect(ahead.take(1)).rejects.toThrow('gone')
    expect(await ahead.take(2)).toBe(2)
    expect(calls).toBe(3)
  })

  it('starts nothing new after stop', () => {
    const { started, load } = controlled()
    const ahead = new Prefetcher(load, (n) => n, 10, { episodes: 2 })
    ahead.stop()
    void ahead.take(0)
    expect(started).toEqual([0])
  })
})
