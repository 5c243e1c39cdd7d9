import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { dataFolderHolder, DataFolderInUse, lockDataFolder } from './data-lock.ts'

const dirs: string[] = []
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-lock-'))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** The pid of a process that has exited (and been reaped). */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!

describe('data folder lock', () => {
  it("creates a missing data folder the user's alone (0700), and leaves an existing one's mode", () => {
    const made = join(folder(), 'new', 'data')
    lockDataFolder(made).release()
    expect(statSync(made).mode & 0o777).toBe(0o700)
    const existing = folder()
    chmodSync(existing, 0o755)
    lockDataFolder(existing).release()
    expect(statSync(existing).mode & 0o777).toBe(0o755)
  })

  it('writes the pid, refuses a second holder, and releases only its own file', () => {
    const dir = folder()
    const lock = lockDataFolder(dir)
    expect(readFileSync(join(dir, 'episodic.lock'), 'utf8').trim()).toBe(String(process.pid))
    expect(() => lockDataFolder(dir)).toThrow(DataFolderInUse)
    expect(() => lockDataFolder(dir)).toThrow(`data folder ${dir} is in use by process ${process.pid}`)
    lock.release()
    expect(existsSync(join(dir, 'episodic.lock'))).toBe(false)
    lock.release()
  })

  it('takes over the lock of a process that is gone, and an empty one left long ago', () => {
    const dir = folder()
    const file = join(dir, 'episodic.lock')
    writeFileSync(file, `${deadPid()}\n`)
    expect(dataFolderHolder(dir)).toBeUndefined()
    lockDataFolder(dir).release()
    writeFileSync(file, '')
    utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    lockDataFolder(dir).release()
  })

  it('lets exactly one of several processes take over the same stale lock', async () => {
    const dir = folder()
    writeFileSync(join(dir, 'episodic.lock'), `${deadPid()}\n`)
    const module = resolve('adapters/node/data-lock.ts')
    const go = join(dir, 'go')
    // Each process says it is ready, waits for the go file, then races for the lock.
    const script = `import { existsSync } from 'node:fs'
import { lockDataFolder } from ${JSON.stringify(module)}
console.log('ready')
while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 5))
try { lockDataFolder(${JSON.stringify(dir)}); console.log('locked') } catch (e) { console.log('refused', e.pid) }
setTimeout(() => {}, 60_000)`
    const children = Array.from({ length: 3 }, () => spawn(process.execPath, ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', script]))
    const outputs = children.map((child) => {
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      return {
        when: (pattern: RegExp) =>
          new Promise<string>((done) => {
            const check = () => (pattern.test(out) ? done(out) : setTimeout(check, 10))
            check()
          }),
      }
    })
    try {
      await Promise.all(outputs.map((o) => o.when(/ready/)))
      writeFileSync(go, '')
      const results = (await Promise.all(outputs.map((o) => o.when(/locked|refused \d+/)))).map((o) => o.replace('ready', '').trim())
      expect(results.filter((o) => o === 'locked')).toHaveLength(1)
      expect(results.filter((o) => o.startsWith('refused '))).toHaveLength(2)
    } finally {
      for (const child of children) child.kill('SIGKILL')
    }
  }, 120_000)
})
