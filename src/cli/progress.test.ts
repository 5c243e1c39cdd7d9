import { describe, expect, it } from 'vitest'
import { bytes, createProgress, duration } from './progress.ts'

describe('upload progress', () => {
  it('formats sizes and times', () => {
    expect([bytes(999), bytes(1500), bytes(2.5e9), bytes(123.4)]).toEqual(['999 B', '1.5 kB', '2.5 GB', '123 B'])
    expect([duration(5), duration(125), duration(3725), duration(NaN)]).toEqual(['0:05', '2:05', '1:02:05', '?'])
  })

  it('redraws one bar with bytes, rate and time left on a terminal', () => {
    let t = 0
    const out: string[] = []
    const progress = createProgress({ total: 100e6, write: (s) => out.push(s), tty: true, columns: 100, now: () => t })
    t = 2000
    progress.update(50e6, 'video')
    expect(out[0]).toMatch(new RegExp(String.raw`^\r\[#+\.+\] {2}50% 50\.0 MB / 100 MB {2}25\.0 MB/s {2}0:02 left {2}video\u001b\[K$`))
    t = 2050
    progress.update(60e6, 'video') // within 100 ms: not redrawn
    expect(out).toHaveLength(1)
    progress.done()
    expect(out.at(-1)).toBe('\n')
  })

  it('writes plain lines at most every 5 s when stderr is not a terminal', () => {
    let t = 0
    const out: string[] = []
    const progress = createProgress({ total: 10, write: (s) => out.push(s), tty: false, now: () => t })
    t = 6000
    progress.update(5, 'sensors')
    t = 7000
    progress.update(6, 'sensors')
    progress.done()
    expect(out).toEqual([expect.stringMatching(/^ 50% 5 B \/ 10 B .* sensors\n$/), expect.stringMatching(/^ 60% 6 B \/ 10 B .* done\n$/)])
  })
})
