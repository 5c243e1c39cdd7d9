import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startControl } from './control.ts'

const dir = mkdtempSync(join(tmpdir(), 'episodic-control-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the control socket', () => {
  it('runs one call per connection, however the bytes after its line arrive', async () => {
    const calls: string[] = []
    let release!: () => void
    const slow = new Promise<void>((r) => (release = r))
    const control = await startControl(dir, async (verb) => {
      calls.push(verb)
      await slow
      return 'done'
    })
    try {
      const info = JSON.parse(readFileSync(join(dir, 'control.json'), 'utf8')) as { socket: string }
      const reply = await new Promise<string>((done, fail) => {
        const conn = createConnection(info.socket)
        let data = ''
        conn.setEncoding('utf8')
        conn.on('connect', () => {
          conn.write(JSON.stringify({ verb: 'keys create', args: [] }) + '\n')
          // More bytes while the call runs: before, each chunk re-ran the buffer's first line.
          setTimeout(() => conn.write('{"verb":"other","args":[]}\n'), 20)
          setTimeout(release, 60)
        })
        conn.on('data', (chunk) => (data += chunk))
        conn.on('end', () => done(data))
        conn.on('error', fail)
      })
      expect(JSON.parse(reply)).toEqual({ ok: true, result: 'done' })
      expect(calls).toEqual(['keys create'])
    } finally {
      control.close()
    }
  })
})
