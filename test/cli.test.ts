/**
 * The `episodic` command as a user runs it: help and exit codes, admin verbs
 * on the embedded database, and the same verbs while `serve` holds it (through
 * the control socket), including the first-start key and curl line. The verbs
 * run in-process (test/helpers/cli.ts); the built bin is spawned once for help,
 * once for an admin verb and once for `serve`.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtCli, runCli, spawnCli } from './helpers/cli.ts'
import { call } from './helpers/http.ts'
import { seedDataDir } from './helpers/pglite.ts'

const dirs: string[] = []
// The spawned smoke tests run the built bin; build (or reuse the build) outside their time.
beforeAll(() => builtCli())
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-cli-'))
  dirs.push(dir)
  return dir
}

/** A data folder whose embedded database starts migrated (test/helpers/pglite.ts). */
async function seededDataDir(): Promise<string> {
  const dir = dataDir()
  await seedDataDir(dir)
  return dir
}

describe('episodic CLI', () => {
  it('prints help for every verb and documents exit codes', async () => {
    const main = await runCli(['--help'])
    expect(main.code).toBe(0)
    expect(main.stdout).toContain('Exit codes')
    for (const verb of ['serve', 'clients', 'keys', 'episodes']) {
      const help = await runCli([verb, '--help'])
      expect(help.code, verb).toBe(0)
      expect(help.stdout).toContain(`episodic ${verb}`)
    }
  })

  it('answers usage errors with exit code 2 and a clear message', async () => {
    expect((await runCli(['launch'])).code).toBe(2)
    const noClient = await runCli(['keys', 'create'])
    expect(noClient.code).toBe(2)
    expect(noClient.stderr).toContain('--client NAME is required')
    expect((await runCli(['clients', 'create'])).code).toBe(2)
    expect((await runCli(['keys', 'list', '--client', 'x', '--bogus'])).code).toBe(2)
    // --client where a verb does not use it is refused, not silently ignored.
    const unused = await runCli(['episodes', 'archive', '00000000-0000-4000-8000-000000000000', '--client', 'acme'])
    expect(unused.code).toBe(2)
    expect(unused.stderr).toContain('episodes archive: --client is not an option of this verb')
  })

  it('answers configuration errors with exit code 3', async () => {
    const bad = await runCli(['clients', 'list'], { env: { EPISODIC_DATA_DIR: dataDir(), S3_ENDPOINT: 'https://x' } })
    expect(bad.code).toBe(3)
    expect(bad.stderr).toContain('S3_BUCKET')
  })

  it('manages clients and keys on the embedded database', async () => {
    const env = { EPISODIC_DATA_DIR: await seededDataDir() }
    expect((await runCli(['clients', 'create', 'acme'], { env })).stdout).toContain('created client "acme"')
    const dup = await runCli(['clients', 'create', 'acme'], { env })
    expect(dup.code).toBe(3) // configuration, not "unexpected failure" (issue 16)
    expect(dup.stderr).toContain('already exists')
    const created = await runCli(['keys', 'create', '--client', 'acme', '--json'], { env })
    const key = JSON.parse(created.stdout)
    expect(key.key).toMatch(/^epk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/)
    const listed = JSON.parse((await runCli(['keys', 'list', '--client', 'acme', '--json'], { env })).stdout)
    expect(listed).toEqual([expect.objectContaining({ key_id: key.key_id, revoked_at: null })])
    expect(JSON.stringify(listed)).not.toContain(key.key.slice(-43))
    expect((await runCli(['keys', 'revoke', key.key], { env })).stdout).toContain(`revoked key ${key.key_id}`)
    const missing = await runCli(['keys', 'list', '--client', 'nobody'], { env })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('no client named "nobody"')
  })

  it('the built bin: help, an exit code, and an admin verb on the embedded database', async () => {
    const help = await spawnCli(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Exit codes')
    expect((await spawnCli(['launch'])).code).toBe(2)
    const env = { EPISODIC_DATA_DIR: dataDir() }
    const created = await spawnCli(['clients', 'create', 'acme'], { env })
    // A folder with no database yet: said once, in case it is not the one meant.
    expect(created.stderr).toBe(
      `note: no embedded database in ${env.EPISODIC_DATA_DIR} yet; creating one (is EPISODIC_DATA_DIR, or the folder you run this from, the server's?)\n`,
    )
    expect(created.stdout).toContain('created client "acme"')
    const listed = await runCli(['clients', 'list'], { env })
    expect(listed.stdout).toMatch(/^acme\t/)
    expect(listed.stderr).toBe('')
  })

  it('serve: first start prints a key and curl line; admin verbs work while it runs', async () => {
    const env = { EPISODIC_DATA_DIR: await seededDataDir() }
    const [command, prefix] = await builtCli()
    const child = spawn(command, [...prefix, 'serve', '--port', '0'], { env: { ...process.env, DATABASE_URL: '', ...env } })
    try {
      let out = ''
      child.stderr.on('data', (d) => (out += d))
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          out += d
          if (out.includes('keys create --client default')) resolve()
        })
        child.on('exit', () => reject(new Error(`serve exited:\n${out}`)))
      })
      const url = /listening on (http:\/\/\S+)/.exec(out)![1]!
      const key = /EPISODIC_API_KEY=(\S+)/.exec(out)![1]!
      expect(out).toContain(`curl -s -X POST ${url}/api/ingest/episode`)

      const opened = await call(`${url}/api/ingest/episode`, { key, body: { name: 'first run', request_uploads: ['actions'] } })
      expect(opened.status).toBe(201)

      const second = JSON.parse((await runCli(['keys', 'create', '--client', 'default', '--json'], { env })).stdout)
      expect((await call(`${url}/api/ingest/episode`, { key: second.key, body: {} })).status).toBe(201)

      const archived = await runCli(['episodes', 'archive', opened.body.episode_id], { env })
      expect(archived.stdout).toContain('was recording')
      expect((await call(`${url}/api/ingest/episode/${opened.body.episode_id}/finalize`, { key, body: {} })).status).toBe(409)

      await runCli(['keys', 'revoke', second.key_id], { env })
      expect((await call(`${url}/api/ingest/episode`, { key: second.key, body: {} })).status).toBe(401)
    } finally {
      child.kill('SIGTERM')
    }
  })
})
