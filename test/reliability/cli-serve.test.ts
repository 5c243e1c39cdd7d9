/**
 * `episodic serve` as an operator meets it (issue 16, items 10 and 11): one
 * server per embedded data folder (a second one refused at once, a killed
 * one's lock taken over, admin verbs through the live server only), and a
 * taken port refused with one line before anything is opened.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtCli } from '../helpers/cli.ts'
import { seedDataDir } from '../helpers/pglite.ts'
import { runCli, type ServeProcess, startServe } from './cli-helpers.ts'

const folders: string[] = []
const servers: ServeProcess[] = []
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-serve-'))
  folders.push(dir)
  return dir
}
/** A data folder whose embedded database starts from the test snapshot (no initdb per process). */
const seededDataDir = async () => {
  const dir = dataDir()
  await seedDataDir(dir)
  return dir
}
beforeAll(() => builtCli(), 600_000)
afterAll(async () => {
  for (const server of servers) await server.kill('SIGKILL')
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

async function healthy(url: string): Promise<boolean> {
  const response = await fetch(`${url}/healthz`)
  return response.status === 200 && (await response.json()).ok === true
}

describe('one server per embedded data folder', () => {
  it('refuses a second server at once, takes over after a kill -9, and keeps every key', async () => {
    const dir = await seededDataDir()
    const env = { EPISODIC_DATA_DIR: dir }
    const first = await startServe(env)
    servers.push(first)
    expect(readFileSync(join(dir, 'episodic.lock'), 'utf8').trim()).toBe(String(first.pid))

    const second = await runCli(['serve', '--port', '0'], env)
    expect(second.code).toBe(3)
    expect(second.stderr.trim()).toBe(`episodic: data folder ${dir} is in use by process ${first.pid}`)
    expect(second.stdout).toBe('')
    expect(second.ms).toBeLessThan(20_000)
    expect(await healthy(first.url)).toBe(true)

    // Admin verbs go through the live server's control socket, never open its database.
    const created = await runCli(['clients', 'create', 'acme'], env)
    expect(created.code).toBe(0)
    const key = await runCli(['keys', 'create', '--client', 'acme', '--json'], env)
    expect(key.code).toBe(0)
    const apiKey = JSON.parse(key.stdout).key as string
    const opened = await fetch(`${first.url}/api/ingest/episode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{"request_uploads": []}',
    })
    expect(opened.status).toBe(201)
    const episodeId = (await opened.json()).episode_id as string

    await first.kill('SIGKILL')
    // The lock still names the dead process; a new server takes it over.
    expect(readFileSync(join(dir, 'episodic.lock'), 'utf8').trim()).toBe(String(first.pid))
    const third = await startServe(env)
    servers.push(third)
    expect(readFileSync(join(dir, 'episodic.lock'), 'utf8').trim()).toBe(String(third.pid))
    const read = await fetch(`${third.url}/api/episodes/${episodeId}`, { headers: { authorization: `Bearer ${apiKey}` } })
    expect(read.status).toBe(200)
    const listed = await runCli(['clients', 'list', '--json'], env)
    expect(JSON.parse(listed.stdout).map((c: { name: string }) => c.name)).toEqual(['acme', 'default'])

    await third.kill('SIGTERM')
    expect(existsSync(join(dir, 'episodic.lock'))).toBe(false)
  }, 300_000)

  it('an admin verb with no server running leaves the folder unlocked afterwards', async () => {
    const dir = await seededDataDir()
    const env = { EPISODIC_DATA_DIR: dir }
    expect((await runCli(['clients', 'create', 'solo'], env)).code).toBe(0)
    expect(existsSync(join(dir, 'episodic.lock'))).toBe(false)
    const server = await startServe(env)
    servers.push(server)
    expect(await healthy(server.url)).toBe(true)
    await server.kill('SIGTERM')
  }, 180_000)
})

describe('serve and admin verbs on a data folder or host that cannot be used', () => {
  it('print one line naming the variable and exit 3, having opened nothing', async () => {
    const root = dataDir()
    mkdirSync(root, { recursive: true })
    const file = join(root, 'a-file')
    writeFileSync(file, '')
    for (
      const [args, env, line] of [
        [
          ['serve'],
          { EPISODIC_DATA_DIR: file, PORT: '0' },
          `data folder ${file} is a file, not a folder; set EPISODIC_DATA_DIR to a folder this user can write`,
        ],
        [
          ['clients', 'list'],
          { EPISODIC_DATA_DIR: join(file, 'data') },
          `data folder ${join(file, 'data')} lies under a file, not a folder; set EPISODIC_DATA_DIR`,
        ],
        [['serve'], { EPISODIC_DATA_DIR: join(root, 'data'), PORT: '0', HOST: 'not a host' }, 'host "not a host" cannot be resolved'],
      ] as const
    ) {
      const result = await runCli([...args], env)
      expect([result.code, result.stdout], args.join(' ')).toEqual([3, ''])
      expect(result.stderr, args.join(' ')).toMatch(new RegExp(`^episodic: ${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\n$`))
    }
  }, 120_000)
})

describe.runIf(process.getuid?.() === 0 && existsSync('/usr/bin/setpriv'))('a data folder whose database another user owns', () => {
  it('is one line naming the variable (exit 3), not a PGlite stack trace', async () => {
    const [command, prefix] = await builtCli()
    const dir = await seededDataDir() // made by root: its db/ is root's
    chmodSync(dir, 0o777)
    const result = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', command, ...prefix, 'clients', 'list'], {
      env: { PATH: process.env.PATH!, EPISODIC_DATA_DIR: dir, EPISODIC_CREDENTIALS_FILE: '/nonexistent' },
      encoding: 'utf8',
    })
    expect([result.status, result.stderr]).toEqual([
      3,
      expect.stringMatching(/^episodic: data folder .* holds files another user owns\); set EPISODIC_DATA_DIR/),
    ])
  }, 120_000)
})

describe('serve on a port in use', () => {
  it('prints one line and exits 3 having opened nothing', async () => {
    const blocker: Server = createServer()
    await new Promise<void>((r) => blocker.listen({ port: 0, host: '127.0.0.1' }, r))
    const port = (blocker.address() as { port: number }).port
    try {
      const dir = dataDir()
      const result = await runCli(['serve'], { EPISODIC_DATA_DIR: dir, PORT: String(port) })
      expect(result.code).toBe(3)
      expect(result.stderr).toBe(`episodic: port ${port} is in use; set PORT\n`)
      expect(result.stdout).toBe('')
      expect(existsSync(join(dir, 'db'))).toBe(false)
      expect(existsSync(join(dir, 'episodic.lock'))).toBe(false)
    } finally {
      await new Promise((r) => blocker.close(r))
    }
  }, 120_000)
})
