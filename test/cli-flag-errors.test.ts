/**
 * The documented exit codes for a bad flag or argument (docs/hardening.md,
 * "CLI exit codes": 2 is "bad flag or argument; a malformed id"), across
 * `upload`, `replay run` and `serve`: one line naming the flag or field and
 * the verb's help hint, never the whole help, never exit 1 or 4 for the
 * caller's typo. Also `upload --metadata` keeping every digit of an integer
 * (docs/hardening.md, "Exact 64-bit seeds"). Runs in-process (runCli).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { recordBaseline } from './helpers/baselines.ts'
import { ROOT } from './helpers/build.ts'
import { runCli } from './helpers/cli.ts'
import { startService, type TestService } from './helpers/service.ts'

let svc: TestService
let key: string
let dir: string
let baseline: string

beforeAll(async () => {
  svc = await startService('pglite')
  key = (await svc.newTenant('cli-flags')).key
  baseline = await recordBaseline(new EpisodicClient({ apiKey: key, baseUrl: svc.url }))
  dir = mkdtempSync(join(tmpdir(), 'episodic-cli-flags-'))
  writeFileSync(join(dir, 'actions.npz'), Buffer.alloc(100, 7))
  writeFileSync(join(dir, 'policy.mjs'), `export const act = (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data })\n`)
})
afterAll(async () => {
  await svc?.close()
  rmSync(dir, { recursive: true, force: true })
})

const env = () => ({
  HOME: dir,
  XDG_CACHE_HOME: join(dir, 'cache'),
  EPISODIC_CREDENTIALS_FILE: join(dir, 'none'),
  EPISODIC_API_KEY: key,
  EPISODIC_BASE_URL: svc.url,
})
const cli = (args: string[]) => runCli(args, { cwd: dir, env: env() })

/** One line naming the problem, then the verb's help hint; nothing on stdout. */
function expectUsage(result: { code: number | null; stdout: string; stderr: string }, verb: string, says: string | RegExp): void {
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines, result.stderr).toHaveLength(2)
  expect(lines[0]).toMatch(says)
  expect(lines[1]).toBe(`see episodic ${verb} --help`)
}

describe('episodic upload', () => {
  it('runs in the given folder and environment, printing the id on stdout', async () => {
    const result = await cli(['upload', '--actions', 'actions.npz', '--robot', 'arm-9'])
    expect(result.code, result.stderr).toBe(0)
    const id = result.stdout.trim()
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(result.stderr).toContain(`portal: ${svc.url}/portal/episodes/${id}`)
  })

  it('keeps every digit of an integer in --metadata', async () => {
    const result = await cli(['upload', '--actions', 'actions.npz', '--metadata', '{"start_ns": 1732560000123456789}'])
    expect(result.code, result.stderr).toBe(0)
    const episode = await new EpisodicClient({ apiKey: key, baseUrl: svc.url }).getEpisode(result.stdout.trim())
    expect(episode.metadata.start_ns).toBe(1732560000123456789n)
  })

  it('answers a bad flag with one line and exit 2, not the whole help', async () => {
    expectUsage(await cli(['upload', '--bogus']), 'upload', /^episodic: Unknown option '--bogus'/)
    expectUsage(await cli(['upload', '--actions', 'actions.npz', '--fps', '0']), 'upload', 'episodic: --fps: must be a positive number')
    expectUsage(await cli(['upload', '--actions', 'actions.npz', '--duration=-1']), 'upload', 'episodic: --duration: must be a number of seconds, at least 0')
    expectUsage(await cli(['upload', '--actions', 'actions.npz', '--seed', '1.5']), 'upload', /^episodic: --seed: must be an integer/)
  })

  it('refuses a field the service would refuse with exit 2 naming it, before anything is opened', async () => {
    const before = (await new EpisodicClient({ apiKey: key, baseUrl: svc.url }).listEpisodes()).items.length
    expectUsage(await cli(['upload', '--actions', 'actions.npz', '--name', 'x'.repeat(201)]), 'upload', 'episodic: --name: must be at most 200 characters')
    expectUsage(await cli(['upload', '--actions', 'actions.npz', '--git-sha', 'a'.repeat(65)]), 'upload', 'episodic: --git-sha: must be at most 64 characters')
    expectUsage(
      await cli(['upload', '--actions', 'actions.npz', '--metadata', '{"a": "\\u0000"}']),
      'upload',
      /^episodic: --metadata: metadata\.a: must not contain/,
    )
    expect((await new EpisodicClient({ apiKey: key, baseUrl: svc.url }).listEpisodes()).items.length).toBe(before)
  })

  it('words a missing key for the command line', async () => {
    const result = await runCli(['upload', '--actions', 'actions.npz'], { cwd: dir, env: { ...env(), EPISODIC_API_KEY: undefined } })
    expect(result.code).toBe(3)
    expect(result.stderr).toContain('set EPISODIC_API_KEY or --profile NAME')
    expect(result.stderr).not.toContain('pass apiKey')
  })
})

describe('episodic replay run', () => {
  const replay = (...args: string[]) => cli(['replay', 'run', '--policy', './policy.mjs:act', ...args])

  it('refuses a malformed or repeated baseline id with exit 2 before any request', async () => {
    expectUsage(
      await replay('--candidate-version', 'v2', '--baseline-episodes', 'not-a-uuid'),
      'replay',
      /^episodic: --baseline-episodes: "not-a-uuid" is not an episode id/,
    )
    expectUsage(
      await replay('--candidate-version', 'v2', '--baseline-episodes', `${baseline},${baseline}`),
      'replay',
      /^episodic: --baseline-episodes: .* is listed twice/,
    )
  })

  it('refuses a blank required flag as a usage error naming the flag', async () => {
    expectUsage(await replay('--candidate-version', '  ', '--baseline-episodes', baseline), 'replay', 'episodic: replay run: --candidate-version is required')
  })

  it('turns a flag value the service refuses into exit 2 naming the field', async () => {
    expectUsage(
      await replay('--candidate-version', 'v'.repeat(121), '--baseline-episodes', baseline),
      'replay',
      /candidate_policy_version: must be at most 120 characters/,
    )
    expectUsage(
      await replay('--candidate-version', 'v2', '--name', 'n'.repeat(201), '--baseline-episodes', baseline),
      'replay',
      /name: must be at most 200 characters/,
    )
  })

  it('refuses in a dry run what a recorded run would refuse, so the preview is faithful', async () => {
    expectUsage(await replay('--dry-run', '--candidate-version', 'v2', '--baseline-episodes', `${baseline},${baseline}`), 'replay', /is listed twice/)
    expectUsage(
      await replay('--dry-run', '--candidate-version', 'v'.repeat(121), '--baseline-episodes', baseline),
      'replay',
      /^episodic: replay run: candidate_policy_version: must be at most 120 characters/,
    )
  })

  it('names the replay help in the hint of every flag error', async () => {
    expectUsage(await replay('--candidate-version', 'v2', '--baseline-episodes', baseline, '--concurrency', '0'), 'replay', /--concurrency must be/)
    expectUsage(await replay('--candidate-version', 'v2', '--baseline-episodes', baseline, '--obs-map', 'a=b'), 'replay', /--obs-map: only for a policy server/)
  })
})

describe('episodic serve', () => {
  it('refuses a bad --port or a stray argument with exit 2', async () => {
    const data = join(dir, 'serve-data')
    const serve = (args: string[]) => runCli(['serve', ...args], { cwd: dir, env: { EPISODIC_DATA_DIR: data, PORT: '0' } })
    expectUsage(await serve(['--port', 'abc']), 'serve', 'episodic: --port must be a port number from 0 to 65535 (got "abc")')
    expectUsage(await serve(['extra']), 'serve', /^episodic: serve: unexpected argument "extra"/)
  })
})

describe('npm run episodic -- ...', () => {
  it('resolves file arguments from where npm was called, not the package folder', () => {
    // npm runs the script from the package root and says where it was called in INIT_CWD.
    const result = spawnSync('npm', ['run', '-s', 'episodic', '--', 'upload', '--actions', 'no-such-file.npz'], {
      cwd: join(ROOT, 'examples'),
      encoding: 'utf8',
      env: { ...process.env, EPISODIC_API_KEY: key, EPISODIC_BASE_URL: svc.url, EPISODIC_CREDENTIALS_FILE: join(dir, 'none') },
      timeout: 120_000,
    })
    expect(result.status, result.stderr).toBe(3)
    expect(result.stderr).toContain(`cannot read ${join(ROOT, 'examples', 'no-such-file.npz')} (ENOENT)`)
  }, 180_000)

  it("works on the data folder of where npm was called, as an example's server there does", () => {
    const folder = mkdtempSync(join(ROOT, 'examples', '.npm-run-'))
    try {
      const run = (...args: string[]) =>
        spawnSync('npm', ['run', '-s', 'episodic', '--', ...args], {
          cwd: folder,
          encoding: 'utf8',
          env: { ...process.env, DATABASE_URL: '' },
          timeout: 120_000,
        })
      const created = run('clients', 'create', 'default')
      expect(created.status, created.stderr).toBe(0)
      expect(existsSync(join(folder, '.episodic'))).toBe(true)
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  }, 180_000)
})
