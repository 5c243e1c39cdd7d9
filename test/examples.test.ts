/**
 * The examples install and serve as their READMEs say, from this clone,
 * without a registry copy of `episodic`: examples/node and examples/bun depend
 * on the repository (`file:../..`) and are installed with npm (offline from
 * npm's cache when it can), examples/deno uses the repository's deno.json.
 * Each then serves a real request on the embedded database: open an episode
 * with a key minted in its data folder, and PUT to the signed upload URL; and
 * the CLI's admin verbs reach the running server through its control socket.
 * examples/workers runs in test/runtimes/workers.test.ts (it needs
 * PostgreSQL), with the bindings of its .dev.vars.example.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createKey } from '../src/admin/admin.ts'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { ensureBuilt, ROOT } from './helpers/build.ts'
import { runCli } from './helpers/cli.ts'
import { call } from './helpers/http.ts'
import { seedDataDir } from './helpers/pglite.ts'
import { binary, freePort, spawnServer } from './runtimes/harness.ts'

const dirs: string[] = []
const installed: string[] = []
beforeAll(() => ensureBuilt())
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  for (const example of installed) rmSync(join(ROOT, 'examples', example, 'node_modules'), { recursive: true, force: true })
})

/** `npm install` as the README says (no lockfile written into the repository). */
function npmInstall(example: string): void {
  const cwd = join(ROOT, 'examples', example)
  installed.push(example)
  const install = (mode: string) =>
    spawnSync('npm', ['install', mode, '--no-audit', '--no-fund', '--no-package-lock'], {
      cwd,
      encoding: 'utf8',
      timeout: 580_000,
      env: { ...process.env, NO_COLOR: '1' },
    })
  let result = install('--offline')
  // Something is not in npm's cache: fetch it from the registry.
  if (result.status !== 0) result = install('--prefer-offline')
  expect(result.status, `${result.stdout}${result.stderr}`).toBe(0)
}

/** A data folder with the embedded database migrated and one client key. */
async function dataFolderWithKey(): Promise<{ dir: string; key: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-example-'))
  dirs.push(dir)
  let key = ''
  await seedDataDir(dir, async (db) => {
    await createClient({ db, sha256: NodeSha256 }, 'example')
    key = (await createKey({ db, sha256: NodeSha256 }, 'example')).key
  })
  return { dir, key }
}

/** The environment of a user's shell, without a database URL (embedded database). */
function shellEnv(extra: Record<string, string>): Record<string, string> {
  const { DATABASE_URL: _, ...env } = process.env as Record<string, string>
  return { ...env, HOST: '127.0.0.1', ...extra }
}

/** Opens an episode through the example's base URL and uploads to the URL it hands out. */
async function serveRequest(base: string, key: string): Promise<void> {
  expect((await fetch(`${base}/healthz`)).status).toBe(200)
  const opened = await call(`${base}/api/ingest/episode`, { key, body: { name: 'from the example', request_uploads: ['actions'] } })
  expect(opened.status, opened.text).toBe(201)
  const [upload] = opened.body.upload_urls
  expect(upload.url.startsWith(`${base}/storage/`)).toBe(true)
  const put = await fetch(upload.url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'npz bytes' })
  expect(put.status).toBe(200)
  const done = await call(`${base}/api/ingest/episode/${opened.body.episode_id}/finalize`, { key, body: { bytes_total: 9 } })
  expect(done.body.status).toBe('ready')
}

/** While the example serves, the CLI's admin verbs reach its database through its control socket. */
async function adminWhileServing(base: string, dir: string): Promise<void> {
  const env = { EPISODIC_DATA_DIR: dir, DATABASE_URL: '' }
  const created = await runCli(['keys', 'create', '--client', 'example', '--json'], { env })
  expect(created.code, created.stderr).toBe(0)
  const { key, key_id } = JSON.parse(created.stdout) as { key: string; key_id: string }
  expect((await call(`${base}/api/episodes?limit=1`, { key })).status).toBe(200)
  expect((await runCli(['keys', 'revoke', key_id], { env })).code).toBe(0)
  // The server forgets a revoked key at once (no cache to wait out).
  expect((await call(`${base}/api/episodes?limit=1`, { key })).status).toBe(401)
}

describe('examples install as written and serve a request', () => {
  it('examples/node: npm install (episodic from file:../..), npm start', async () => {
    npmInstall('node')
    const { dir, key } = await dataFolderWithKey()
    const port = await freePort()
    const cwd = join(ROOT, 'examples/node')
    const server = await spawnServer('node', join(cwd, 'node_modules/.bin/tsx'), ['server.ts'], shellEnv({ PORT: String(port), EPISODIC_DATA_DIR: dir }), cwd)
    try {
      expect(await (await fetch(server.url)).text()).toBe('the existing application\n')
      await serveRequest(`${server.url}/episodic`, key)
      await adminWhileServing(`${server.url}/episodic`, dir)
    } finally {
      await server.stop()
    }
  })

  it('examples/bun: npm install (episodic from file:../..), bun run server.ts', async () => {
    npmInstall('bun')
    const { dir, key } = await dataFolderWithKey()
    const cwd = join(ROOT, 'examples/bun')
    const server = await spawnServer('bun', binary('bun'), ['run', 'server.ts'], shellEnv({ PORT: '0', EPISODIC_DATA_DIR: dir }), cwd)
    try {
      await serveRequest(server.url, key)
      await adminWhileServing(server.url, dir)
    } finally {
      await server.stop()
    }
  })

  it("examples/deno: deno run -A server.ts with the repository's deno.json", async () => {
    const { dir, key } = await dataFolderWithKey()
    const cwd = join(ROOT, 'examples/deno')
    const server = await spawnServer('deno', binary('deno'), ['run', '-A', 'server.ts'], shellEnv({ PORT: '0', EPISODIC_DATA_DIR: dir }), cwd)
    try {
      await serveRequest(server.url, key)
      await adminWhileServing(server.url, dir)
    } finally {
      await server.stop()
    }
  })
})
