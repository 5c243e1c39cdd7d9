/**
 * `npm run build` once per change of the sources, shared by every test that
 * needs the built package (the spawned CLI smoke tests, the npm package test,
 * the examples that depend on the repository). The first caller builds into
 * dist/ under a lock; the others wait for it; a later run with the same
 * sources reuses dist/ (a hash of the inputs is kept next to the lock).
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '../..')
const CACHE = join(ROOT, 'node_modules', '.cache', 'episodic-test')
const LOCK = join(CACHE, 'build.lock')
const STAMP = join(CACHE, 'build.hash')
/** A lock older than this belongs to a run that died mid-build. */
const STALE_LOCK_MS = 15 * 60 * 1000

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
  for (const file of ['package.json', 'tsup.config.ts', 'tsconfig.json', 'README.md', 'LICENSE']) {
    if (existsSync(join(ROOT, file))) hash.update(file).update(readFileSync(join(ROOT, file)))
  }
  return hash.digest('hex')
}

const isBuilt = (hash: string) => existsSync(join(ROOT, 'dist', 'cli.js')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash

let pending: Promise<string> | undefined

/** Resolves with the dist folder once it holds a build of the current sources. */
export function ensureBuilt(): Promise<string> {
  pending ??= build()
  return pending
}

async function build(): Promise<string> {
  const hash = sourceHash()
  mkdirSync(CACHE, { recursive: true })
  for (;;) {
    if (isBuilt(hash)) return join(ROOT, 'dist')
    if (tryLock()) break
    await new Promise((r) => setTimeout(r, 500))
  }
  try {
    if (isBuilt(hash)) return join(ROOT, 'dist')
    rmSync(STAMP, { force: true })
    await runBuild()
    writeFileSync(STAMP, hash)
    return join(ROOT, 'dist')
  } finally {
    rmSync(LOCK, { recursive: true, force: true })
  }
}

function tryLock(): boolean {
  try {
    mkdirSync(LOCK)
    return true
  } catch {
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true })
    } catch {
      // another process removed it first
    }
    return false
  }
}

function runBuild(): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'tsup', 'dist', 'cli-default.js')], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    child.once('error', fail)
    child.once('close', (code) => (code === 0 ? done() : fail(new Error(`npm run build (tsup) failed with ${code}:\n${output}`))))
  })
}
