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
  it('reads ahead up to the episode limit once a size is known', async () => {
    const { started, finish, load } = controlled()
    const ahead = new Prefetcher(load, (n) => n, 10, { bytes: 1e9, episodes: 3 })
    const first = ahead.take(0)
    expect(started).toEqual([0])
    finish.get(0)!(100)
    expect(await first).toBe(100)
    await tick()
    expect(started).toEqual([0, 1, 2, 3])
  })

  it('reads nothing ahead before one download has told how big episodes are', async () => {
    const { started, finish, load } = controlled()
    // Episodes of 500 against a budget of 256: before the first size was known, all 8
    // read-ahead downloads started at once (8 x 500 held against a budget of 256).
    const ahead = new Prefetcher(load, (n) => n, 10, { bytes: 256, episodes: 8 })
    void ahead.take(0)
    expect(started).toEqual([0])
    finish.get(0)!(500)
    await tick()
    // One in flight on the estimate of 500 is over the budget: one ahead at a time.
    expect(started).toEqual([0, 1])
  })

  it('stops starting downloads once fetched-but-untaken bytes reach the budget', async () => {
    const { started, finish, load } = controlled()
    const ahead = new Prefetcher(load, (n) => n, 10, { bytes: 250, episodes: 8 })
    void ahead.take(0)
    expect(started).toEqual([0])
    finish.get(0)!(100)
    await tick()
    // Three in flight on an estimate of 100 each: 300 is over the 250-byte budget.
    expect(started).toEqual([0, 1, 2, 3])
    for (let i = 1; i <= 3; i++) finish.get(i)!(100)
    await tick()
    // Three fetched and untaken (300) are over the budget: nothing more starts.
    expect(started).toEqual([0, 1, 2, 3])
    for (let i = 1; i <= 3; i++) void ahead.take(i)
    await tick()
    // Nothing held: 4, 5 and 6 start (0, 100 and 200 estimated in flight before each; 300 stops).
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6])
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
