/**
 * The npm package as users get it: `npm run build`, `npm pack`, then install
 * the tarball into an empty project (offline from npm's cache when it can)
 * and use it from there: import every subpath on Node, Deno and Bun, type-check
 * a consumer against the .d.ts files, run the `episodic` bin, serve a request
 * from the built core, and bundle a Worker from `episodic/workers`.
 * The build is the one shared by the whole run (test/helpers/build.ts).
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from '../helpers/build.ts'
import { numpyVersion } from '../helpers/python.ts'
import { binary, ROOT } from './harness.ts'

const EXPECTED: Record<string, string[]> = {
  episodic: ['createApp', 'openDatabase', 'readConfig', 'createLocalStorage', 'createS3Storage', 'EpisodicError', 'migrateToLatest', 'schemas'],
  'episodic/client': ['EpisodicClient'],
  'episodic/replay': ['createRun', 'runAgainst', 'completeRun', 'readNpz'],
  'episodic/node': ['createNodeApp', 'serveNode', 'nodeListener'],
  'episodic/deno': ['createDenoApp', 'serveDeno'],
  'episodic/bun': ['createBunApp', 'serveBun'],
  'episodic/workers': ['createWorker', 'createR2Files'],
}

function run(command: string, args: string[], options: SpawnSyncOptions & { cwd: string }): string {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 580_000, ...options, env: { ...process.env, NO_COLOR: '1', ...options.env } })
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${output}`)
  return String(result.stdout)
}

describe('npm package', () => {
  let dir: string
  let project: string
  let files: string[]

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'episodic-pack-'))
    await ensureBuilt()
    const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT }))[0]
    files = packed.files.map((f: { path: string }) => f.path)
    project = join(dir, 'consumer')
    run('mkdir', ['-p', project], { cwd: dir })
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    const tarball = join(dir, packed.filename)
    try {
      run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project })
    } catch {
      // Something is not in npm's cache: fetch it from the registry.
      run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project })
    }
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('ships only the build, the LICENSE, the README and package.json', () => {
    expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json'])
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    for (const target of Object.values(pkg.exports) as { types: string; default: string }[]) {
      expect(files).toContain(target.default.slice(2))
      expect(files).toContain(target.types.slice(2))
    }
    expect(readFileSync(join(project, 'node_modules/episodic/dist/cli.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/)
  })

  const importAll = `
    const expected = ${JSON.stringify(EXPECTED)}
    for (const [specifier, names] of Object.entries(expected)) {
      const mod = await import(specifier)
      const missing = names.filter((name) => typeof mod[name] === 'undefined')
      if (missing.length) throw new Error(specifier + ' lacks ' + missing.join(', '))
    }
    console.log('imported ' + Object.keys(expected).length)
  `

  const runtimes: [string, () => [string, string[]]][] = [
    ['node', () => [process.execPath, []]],
    ['deno', () => [binary('deno'), ['run', '-A']]],
    ['bun', () => [binary('bun'), []]],
  ]
  it.each(runtimes)('imports every subpath on %s', (_runtime, command) => {
    writeFileSync(join(project, 'import-all.mjs'), importAll)
    const [bin, args] = command()
    expect(run(bin, [...args, 'import-all.mjs'], { cwd: project })).toContain(`imported ${Object.keys(EXPECTED).length}`)
  })

  it('ships the Python bridge in dist/ and runs a Python policy from the installed package', () => {
    expect(files).toContain('dist/episodic_bridge.py')
    if (numpyVersion() === null && process.env.CI !== 'true') {
      console.warn('*** SKIPPED: python3/numpy not found; the installed pythonPolicy was not run ***')
      return
    }
    writeFileSync(join(project, 'double.py'), 'def act(obs):\n    return {"a": obs["x"] * 2}\n')
    writeFileSync(
      join(project, 'python-policy.mjs'),
      `
      import { pythonPolicy } from 'episodic/replay'
      const policy = pythonPolicy({ module: 'double.py:act', python: ${JSON.stringify(process.env.PYTHON ?? 'python3')} })
      await policy.reset({ episodeIndex: 0, baselineEpisodeId: 'b', steps: 1 })
      const action = await policy.act({ x: { dtype: 'float32', shape: [2], data: Float32Array.of(1.5, 2), order: 'C' } }, { step: 0, steps: 1, episodeIndex: 0, baselineEpisodeId: 'b' })
      await policy.close()
      console.log(action.a.dtype, Array.from(action.a.data).join(','))
    `,
    )
    expect(run(process.execPath, ['python-policy.mjs'], { cwd: project }).trim()).toBe('float32 3,4')
  }, 60_000)

  it('runs the episodic bin', () => {
    const help = run(join(project, 'node_modules/.bin/episodic'), ['--help'], { cwd: project })
    expect(help).toContain('Usage: episodic')
  })

  it('serves a request from the built core (embedded database, built-in store)', () => {
    writeFileSync(
      join(project, 'serve.mjs'),
      `
      import { createApp, createClient, createKey, createLocalStorage, createMemoryFiles, openDatabase } from 'episodic'
      const db = await openDatabase()
      const app = createApp({ db, storage: createLocalStorage({ files: createMemoryFiles(), secret: 's' }) })
      await createClient(app.deps, 'acme')
      const { key } = await createKey(app.deps, 'acme')
      const res = await app.request('/api/ingest/episode', { method: 'POST', headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' }, body: '{}' })
      const body = await res.json()
      console.log(res.status, body.status, body.upload_urls.length)
      await db.destroy()
    `,
    )
    expect(run(process.execPath, ['serve.mjs'], { cwd: project }).trim()).toBe('201 recording 3')
  })

  /** `tsc` over `file` as a strict NodeNext consumer with @types/node, its lib `lib`. */
  function typeCheck(file: string, lib: string[]): void {
    const config = `tsconfig.${file.replace(/\.ts$/, '')}.json`
    writeFileSync(
      join(project, config),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
          lib,
        },
        files: [file],
      }),
    )
    run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], { cwd: project })
  }

  it('type-checks a consumer against the .d.ts files', () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      `
      import { createApp, readConfig, type EpisodicOptions, type OpenEpisodeInput } from 'episodic'
      import { EpisodicClient } from 'episodic/client'
      import { runAgainst, type Action, type Policy } from 'episodic/replay'
      import { createNodeApp, nodeListener } from 'episodic/node'
      import { serveDeno } from 'episodic/deno'
      import { serveBun } from 'episodic/bun'
      import { createWorker, type EpisodicWorker } from 'episodic/workers'
      const worker: EpisodicWorker = createWorker({ migrate: false })
      const body: OpenEpisodeInput = { robot: 'arm', request_uploads: ['actions'] }
      const last: Action = { '/joint_states/position': [0.1, 0.2], _outcome: { success: true, reward_total: 3, collision_count: 0 } }
      // @ts-expect-error _outcome.success is a boolean (the spec's sentinel is typed)
      const wrong: Action = { _outcome: { success: 'yes' } }
      export const used = [createApp, readConfig, EpisodicClient, runAgainst, createNodeApp, nodeListener, serveDeno, serveBun, worker, body, last, wrong]
      export type T = [EpisodicOptions, Policy]
    `,
    )
    typeCheck('consumer.ts', ['es2023', 'dom'])
  })

  it('type-checks a Node consumer whose lib has no DOM (only @types/node)', () => {
    writeFileSync(
      join(project, 'node-consumer.ts'),
      `
      import { createNodeApp, openDiskFile } from 'episodic/node'
      import { EpisodicClient, recordEpisode } from 'episodic/client'
      const file = await openDiskFile('sensors.npz')
      export const used = [createNodeApp, EpisodicClient, recordEpisode, file.size, file.type, file.path]
    `,
    )
    typeCheck('node-consumer.ts', ['es2023'])
  })

  it('bundles a Worker from episodic/workers for workerd, without the embedded database', async () => {
    writeFileSync(join(project, 'worker.ts'), `import { createWorker } from 'episodic/workers'\nexport default createWorker()\n`)
    const { build } = await import('esbuild')
    const result = await build({
      entryPoints: [join(project, 'worker.ts')],
      absWorkingDir: project,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      conditions: ['workerd', 'worker', 'import'],
      mainFields: ['module', 'main'],
      external: ['node:*', 'cloudflare:*', ...builtinModules],
      write: false,
      logLevel: 'silent',
    })
    const code = result.outputFiles[0]!.text
    expect(code).toContain('cloudflare:sockets') // postgres.js's workerd build
    expect(code).not.toMatch(/pglite/i)
    expect(existsSync(join(project, 'node_modules/postgres/cf/src/index.js'))).toBe(true)
  })
})
