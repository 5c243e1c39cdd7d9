/**
 * The `episodic` command as a user runs it: help and exit codes, admin verbs
 * on the embedded database, and the same verbs while `serve` holds it (through
 * the control socket), including the first-start key and curl line.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { call } from './helpers/http.ts'

const CLI = ['--import', 'tsx', 'src/cli/main.ts']
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-cli-'))
  dirs.push(dir)
  return dir
}

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [...CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: '', ...env },
    timeout: 60_000,
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe('episodic CLI', () => {
  it('prints help for every verb and documents exit codes', () => {
    const main = run(['--help'])
    expect(main.code).toBe(0)
    expect(main.stdout).toContain('Exit codes')
    for (const verb of ['serve', 'clients', 'keys', 'episodes']) {
      const help = run([verb, '--help'])
      expect(help.code, verb).toBe(0)
      expect(help.stdout).toContain(`episodic ${verb}`)
    }
  })

  it('answers usage errors with exit code 2 and a clear message', () => {
    expect(run(['launch']).code).toBe(2)
    const noClient = run(['keys', 'create'])
    expect(noClient.code).toBe(2)
    expect(noClient.stderr).toContain('--client NAME is required')
    expect(run(['clients', 'create']).code).toBe(2)
    expect(run(['keys', 'list', '--client', 'x', '--bogus']).code).toBe(2)
  })

  it('answers configuration errors with exit code 3', () => {
    const bad = run(['clients', 'list'], { EPISODIC_DATA_DIR: dataDir(), S3_ENDPOINT: 'https://x' })
    expect(bad.code).toBe(3)
    expect(bad.stderr).toContain('S3_BUCKET')
  })

  it('manages clients and keys on the embedded database', () => {
    const env = { EPISODIC_DATA_DIR: dataDir() }
    expect(run(['clients', 'create', 'acme'], env).stdout).toContain('created client "acme"')
    const dup = run(['clients', 'create', 'acme'], env)
    expect(dup.code).toBe(1)
    expect(dup.stderr).toContain('already exists')
    const created = run(['keys', 'create', '--client', 'acme', '--json'], env)
    const key = JSON.parse(created.stdout)
    expect(key.key).toMatch(/^epk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/)
    const listed = JSON.parse(run(['keys', 'list', '--client', 'acme', '--json'], env).stdout)
    expect(listed).toEqual([expect.objectContaining({ key_id: key.key_id, revoked_at: null })])
    expect(JSON.stringify(listed)).not.toContain(key.key.slice(-43))
    expect(run(['keys', 'revoke', key.key], env).stdout).toContain(`revoked key ${key.key_id}`)
    const missing = run(['keys', 'list', '--client', 'nobody'], env)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('no client named "nobody"')
  })

  it('serve: first start prints a key and curl line; admin verbs work while it runs', async () => {
    const env = { EPISODIC_DATA_DIR: dataDir() }
    const child = spawn(process.execPath, [...CLI, 'serve', '--port', '0'], { env: { ...process.env, DATABASE_URL: '', ...env } })
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

      const second = JSON.parse(run(['keys', 'create', '--client', 'default', '--json'], env).stdout)
      expect((await call(`${url}/api/ingest/episode`, { key: second.key, body: {} })).status).toBe(201)

      const archived = run(['episodes', 'archive', opened.body.episode_id], env)
      expect(archived.stdout).toContain('was recording')
      expect((await call(`${url}/api/ingest/episode/${opened.body.episode_id}/finalize`, { key, body: {} })).status).toBe(409)

      run(['keys', 'revoke', second.key_id], env)
      expect((await call(`${url}/api/ingest/episode`, { key: second.key, body: {} })).status).toBe(401)
    } finally {
      child.kill('SIGTERM')
    }
  })
})
