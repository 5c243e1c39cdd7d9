/**
 * Builds of the package for the tests, once per change of the sources. The
 * first caller builds under a lock; the others wait for it; a later run with
 * the same sources reuses the output (a hash of the inputs is kept beside it).
 *
 * - `ensureBuilt()`: `npm run build` into dist/ (tsup's bundles, then tsc's
 *   .d.ts), for the npm package test and the examples that install the
 *   repository.
 * - `ensureBuiltCli()`: the same bundles without .d.ts (about 1 s instead of
 *   15-30 s) in a cache folder, for the tests that spawn the `episodic` bin.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '../..')
const CACHE = join(ROOT, 'node_modules', '.cache', 'episodic-test')
/** A lock older than this belongs to a run that died mid-build. */
const STALE_LOCK_MS = 15 * 60 * 1000

interface Build {
  name: string
  outDir: string
  /** tsup's command-line arguments beyond the config in tsup.config.ts. */
  args: string[]
  /** Also emit the .d.ts files (`tsc -p tsconfig.build.json`, as `npm run build` does). */
  declarations: boolean
}

const FULL: Build = { name: 'build', outDir: join(ROOT, 'dist'), args: [], declarations: true }
const CLI_DIST = join(CACHE, 'cli-dist')
// Inside node_modules/.cache, so the bundles resolve their dependencies from the repository's node_modules.
const CLI: Build = {
  name: 'cli-build',
  outDir: CLI_DIST,
  args: ['--out-dir', CLI_DIST, '--onSuccess', `cp src/replay/python/episodic_bridge.py ${CLI_DIST}/episodic_bridge.py`],
  declarations: false,
}

/** Hash of everything the build reads: sources, adapters, package and build configs. */
export function sourceHash(): string {
  const hash = createHash('sha256')
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (!name.endsWith('.test.ts')) hash.update(path.slice(ROOT.length)).update(readFileSync(path))
    }
  }
  walk(join(ROOT, 'src'))
  walk(join(ROOT, 'adapters'))
  for (const file of ['package.json', 'tsup.config.ts', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'LICENSE']) {
    if (existsSync(join(ROOT, file))) hash.update(file).update(readFileSync(join(ROOT, file)))
  }
  return hash.digest('hex')
}

const pending = new Map<string, Promise<string>>()

/** Resolves with dist/ once it holds a full build (with .d.ts) of the current sources. */
export function ensureBuilt(): Promise<string> {
  return once(FULL)
}

/** Resolves with a folder holding the bundles (no .d.ts) of the current sources, cli.js among them. */
export function ensureBuiltCli(): Promise<string> {
  return once(CLI)
}

function once(target: Build): Promise<string> {
  let promise = pending.get(target.name)
  if (!promise) pending.set(target.name, promise = build(target))
  return promise
}

async function build(target: Build): Promise<string> {
  const hash = sourceHash()
  const lock = join(CACHE, `${target.name}.lock`)
  const stamp = join(CACHE, `${target.name}.hash`)
  const isBuilt = () => existsSync(join(target.outDir, 'cli.js')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash
  mkdirSync(CACHE, { recursive: true })
  for (;;) {
    if (isBuilt()) return target.outDir
    if (tryLock(lock)) break
    await new Promise((r) => setTimeout(r, 500))
  }
  try {
    if (isBuilt()) return target.outDir
    rmSync(stamp, { force: true })
    await runNode(join(ROOT, 'node_modules', 'tsup', 'dist', 'cli-default.js'), target.args)
    if (target.declarations) await runNode(join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), ['-p', 'tsconfig.build.json'])
    writeFileSync(stamp, hash)
    return target.outDir
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock)
    return true
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true })
    } catch {
      // another process removed it first
    }
    return false
  }
}

function runNode(script: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    child.once('error', fail)
    child.once('close', (code) => (code === 0 ? done() : fail(new Error(`${script} ${args.join(' ')} failed with ${code}:\n${output}`))))
  })
}
