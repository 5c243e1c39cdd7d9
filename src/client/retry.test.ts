import { describe, expect, it } from 'vitest'
import { ConflictError, NotFoundError, ServerError, TransportError } from './errors.ts'
import { retrying } from './retry.ts'

describe('retrying', () => {
  const failing = (errors: Error[]) => {
    let calls = 0
    const call = () => {
      const error = errors[calls++]
      return error ? Promise.reject(error) : Promise.resolve(calls)
    }
    return { call, calls: () => calls }
  }

  it('tries again after network failures, 5xx and 429, waiting longer each time and at least Retry-After', async () => {
    const waits: number[] = []
    const { call } = failing([new TransportError('reset'), new ServerError('busy', 503), new ServerError('slow down', 429, 7)])
    expect(await retrying(call, { attempts: 4, backoffMs: 100, sleep: (ms) => (waits.push(ms), Promise.resolve()) })).toBe(4)
    expect(waits).toEqual([100, 200, 7000])
  })

  it('gives the last error after the last attempt, and any other error at once', async () => {
    const sleep = async () => {}
    const down = failing(Array.from({ length: 5 }, () => new TransportError('refused')))
    await expect(retrying(down.call, { attempts: 3, sleep })).rejects.toThrow('refused')
    expect(down.calls()).toBe(3)
    const missing = failing([new NotFoundError('no such run')])
    await expect(retrying(missing.call, { sleep })).rejects.toBeInstanceOf(NotFoundError)
    expect(missing.calls()).toBe(1)
  })

  it('counts a 409 as passing only for a keyed request (its first try still running)', async () => {
    const sleep = async () => {}
    await expect(retrying(failing([new ConflictError('finalized')]).call, { sleep })).rejects.toBeInstanceOf(ConflictError)
    expect(await retrying(failing([new ConflictError('still in progress')]).call, { sleep }, true)).toBe(2)
  })
})
