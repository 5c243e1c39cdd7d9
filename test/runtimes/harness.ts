/**
 * Starts the service on a real runtime for the runtime-neutral suite: Node,
 * Deno and Bun run the example servers in examples/ as child processes (the
 * binaries come from npm: node_modules/.bin/deno and bun), Workers runs
 * examples/workers bundled with esbuild inside workerd through Miniflare,
 * connecting to PostgreSQL itself (postgres.js over nodejs_compat) with R2
 * emulated.
 *
 * Every runtime gets a throwaway PostgreSQL database (TEST_DATABASE_URL).
 * Keys are minted straight in that database with src/admin/admin.ts, as the
 * `episodic keys create` verb does, so the suite never needs an admin endpoint.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { archiveEpisode, createClient, createKey, revokeKey } from '../../src/admin/admin.ts'
import { openDatabase } from '../../src/db/open.ts'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { createTempDatabase } from '../helpers/postgres.ts'
import { httpFetch, type Target, type Tenant, waitForRefusal, withCall } from '../conformance/target.ts'

export const ROOT = resolve(import.meta.dirname, '../..')

export type RuntimeName = 'node' | 'deno' | 'bun' | 'workers'

export type { Tenant }

/**
 * The service running on one runtime, plus the operator's side (keys,
 * archiving) on the same database: a conformance target over HTTP.
 */
export interface RuntimeService extends Target {
  runtime: RuntimeName
}

interface Started {
  /** Base URL of the service. */
  url: string
  stop(): Promise<void>
}

/** Starts `runtime` on a fresh database and waits until it answers. */
export async function startRuntime(runtime: RuntimeName): Promise<RuntimeService> {
  const temp = await createTempDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), `episodic-${runtime}-`))
  const env = { DATABASE_URL: temp.url, EPISODIC_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' }
  let started: Started | undefined
  try {
    started = await STARTERS[runtime](env, temp.url)
    // The first request also migrates on Workers (once per isolate).
    const health = await fetch(`${started.url}/healthz`)
    if (health.status !== 200) throw new Error(`${runtime}: /healthz answered ${health.status}: ${await health.text()}`)
  } catch (error) {
    await started?.stop()
    await temp.drop()
    rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  const admin = await openDatabase({ url: temp.url, max: 2, skipMigrations: true })
  const deps = { db: admin, sha256: NodeSha256 }
  let n = 0
  const url = started.url
  return {
    runtime,
    ...withCall({
      url,
      fetch: httpFetch,
      async newTenant(name = `${runtime}-${++n}-${Math.random().toString(36).slice(2, 6)}`) {
        const client = await createClient(deps, name)
        const key = await createKey(deps, name)
        return { clientId: client.id, key: key.key, keyId: key.key_id }
      },
      async revoke(tenant) {
        await revokeKey(deps, tenant.keyId)
        await waitForRefusal({ url, fetch }, tenant.key)
      },
      async archive(id) {
        await archiveEpisode(deps, id)
      },
      async deleteEpisode(id) {
        await admin.deleteFrom('episodes').where('id', '=', id).execute()
      },
      close,
    }),
  }
  async function close() {
    await started!.stop()
    await admin.destroy()
    await temp.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

type Starter = (env: Record<string, string>, databaseUrl: string) => Promise<Started>

const STARTERS: Record<RuntimeName, Starter> = {
  // The example host server mounts the service under /episodic; it needs its
  // port up front to sign URLs under that prefix.
  node: async (env) => {
    const port = String(await freePort())
    const url = await spawnServer('node', process.execPath, ['--import', 'tsx', 'examples/node/server.ts'], { ...env, PORT: port })
    return { url: `${url.url}/episodic`, stop: url.stop }
  },
  deno: (env) => spawnServer('deno', binary('deno'), ['run', '-A', 'examples/deno/server.ts'], env),
  bun: (env) => spawnServer('bun', binary('bun'), ['examples/bun/server.ts'], env),
  workers: (_env, databaseUrl) => startWorkerd(databaseUrl),
}

/** A binary installed from npm (devDependencies), never one from PATH. */
export function binary(name: 'deno' | 'bun'): string {
  const path = join(ROOT, 'node_modules', '.bin', name)
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm ci (the ${name} package provides it)`)
  return path
}

/**
 * Runs a server script and resolves with the URL from its
 * `listening on http://...` line; rejects with its output if it exits first
 * or stays silent for 300 s.
 */
export function spawnServer(runtime: string, command: string, args: string[], env: Record<string, string>, cwd = ROOT): Promise<Started> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  return new Promise<Started>((resolvePromise, reject) => {
    const timer = setTimeout(() => fail(new Error(`${runtime} did not report listening within 300 s:\n${output}`)), 300_000)
    const fail = (error: Error) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolvePromise({ url: match[1]!, stop: () => stopChild(child) })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk))
    child.once('error', fail)
    child.once('exit', (code, signal) => fail(new Error(`${runtime} exited (${code ?? signal}) before listening:\n${output}`)))
  })
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((done) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000)
    child.once('exit', () => {
      clearTimeout(force)
      done()
    })
    child.kill('SIGTERM')
  })
}

/** A port nothing listens on right now (127.0.0.1), for servers that must know theirs before they start. */
export function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })
}

/** compatibility_date and compatibility_flags as written in examples/workers/wrangler.toml. */
export function wranglerSettings(): { compatibilityDate: string; compatibilityFlags: string[] } {
  const toml = readFileSync(join(ROOT, 'examples/workers/wrangler.toml'), 'utf8')
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1]
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1]
  if (!date || flags === undefined) throw new Error('examples/workers/wrangler.toml lacks compatibility_date or compatibility_flags')
  return { compatibilityDate: date, compatibilityFlags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1]!) }
}

/**
 * Bundles examples/workers/src/index.ts the way wrangler does (esbuild,
 * `workerd` export condition, Node built-ins left to nodejs_compat).
 */
export async function bundleWorker(): Promise<string> {
  const { build } = await import('esbuild')
  const result = await build({
    entryPoints: [join(ROOT, 'examples/workers/src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'import'],
    mainFields: ['module', 'main'],
    external: ['node:*', 'cloudflare:*', ...builtinModules],
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text
}

async function startWorkerd(databaseUrl: string): Promise<Started> {
  const { Miniflare } = await import('miniflare')
  const settings = wranglerSettings()
  // DATABASE_URL rather than an emulated Hyperdrive binding: Miniflare's
  // Hyperdrive proxy pipes sockets in this process without error handlers, so
  // a connection reset at shutdown would surface as an uncaught exception.
  // The Worker reads either the same way (adapters/workers).
  const mf = new Miniflare({
    modules: [{ type: 'ESModule', path: 'worker.js', contents: await bundleWorker() }],
    compatibilityDate: settings.compatibilityDate,
    compatibilityFlags: settings.compatibilityFlags,
    r2Buckets: ['BUCKET'],
    // The secrets a user copies from .dev.vars.example for `wrangler dev`: the suite proves they suffice.
    bindings: { ...devVars(), DATABASE_URL: databaseUrl },
    host: '127.0.0.1',
    port: 0,
  })
  const url = await mf.ready
  return { url: url.origin, stop: () => mf.dispose() }
}

/** The KEY=VALUE lines of examples/workers/.dev.vars.example (what `wrangler dev` reads from .dev.vars). */
export function devVars(): Record<string, string> {
  const text = readFileSync(join(ROOT, 'examples/workers/.dev.vars.example'), 'utf8')
  return Object.fromEntries([...text.matchAll(/^([A-Z_][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]))
}

/** How each server runtime runs a TypeScript file from the repository root. */
const SCRIPT_COMMANDS: Record<Exclude<RuntimeName, 'workers'>, () => [string, string[]]> = {
  node: () => [process.execPath, ['--import', 'tsx']],
  deno: () => [binary('deno'), ['run', '-A']],
  bun: () => [binary('bun'), []],
}

/**
 * Runs a script on a runtime to completion (REPLAY HOOK: this is how a test
 * runs the replay client on Deno and Bun against a `RuntimeService`), with
 * `episodic`, `episodic/client`, `episodic/replay`, ... resolving to the
 * sources (tsconfig paths for Node and Bun, deno.json imports for Deno).
 */
export function runScript(
  runtime: Exclude<RuntimeName, 'workers'>,
  file: string,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [command, args] = SCRIPT_COMMANDS[runtime]()
  const child = spawn(command, [...args, file], { cwd: ROOT, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk))
  return new Promise((done, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${runtime} ${file} ran longer than ${timeoutMs} ms:\n${stdout}${stderr}`))
    }, timeoutMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr })
    })
  })
}
