/**
 * `episodic replay run` as a user runs it against a live service: the
 * spec's output lines, policy resolution (dotted attribute, .mjs and .ts
 * files, @file baseline lists, profiles) and the documented exit codes.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { recordBaseline } from './helpers/baselines.ts'
import { startService, type TestService } from './helpers/service.ts'

const MAIN = resolve('src/cli/main.ts')
const TSX = import.meta.resolve('tsx')
let svc: TestService
let key: string
let baselines: string[]
let dir: string

beforeAll(async () => {
  svc = await startService('pglite')
  key = (await svc.newTenant('cli')).key
  const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
  baselines = [await recordBaseline(client), await recordBaseline(client)]
  dir = mkdtempSync(join(tmpdir(), 'episodic-replay-cli-'))
  writeFileSync(
    join(dir, 'policy.mjs'),
    `export const policies = { v2: { act: (obs) => ({ '/joint_states/position': Array.from(obs['/joint_states/position'].data, (x) => x + 0.01) }) } }
export const crash = () => { throw new Error('boom') }
export const better = (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data, _outcome: { collision_count: 0, reward_total: 11, time_to_goal_s: 4 } })
`,
  )
  writeFileSync(join(dir, 'typed.ts'), `export function act(obs: Record<string, { data: Float64Array }>): Record<string, unknown> { return { '/joint_states/position': obs['/joint_states/position']!.data } }\n`)
  // A policy package resolved from the working directory (node_modules/lab-policies).
  mkdirSync(join(dir, 'node_modules', 'lab-policies'), { recursive: true })
  writeFileSync(join(dir, 'node_modules', 'lab-policies', 'package.json'), JSON.stringify({ name: 'lab-policies', type: 'module', exports: { '.': './index.js', './v2': './v2.js' } }))
  writeFileSync(join(dir, 'node_modules', 'lab-policies', 'index.js'), `export default { act: (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data }) }\n`)
  writeFileSync(join(dir, 'node_modules', 'lab-policies', 'v2.js'), `export const nested = { act: (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data }) }\n`)
  writeFileSync(join(dir, 'ids.txt'), `${baselines[0]}\n\n${baselines[1]}\n`)
  writeFileSync(join(dir, 'credentials'), `[default]\napi_key = epk_aaaaaaaaaaaa_${'C'.repeat(43)}\n\n[lab]\napi_key = ${key}\nbase_url = ${svc.url}\n`)
})
afterAll(async () => {
  await svc?.close()
  rmSync(dir, { recursive: true, force: true })
})

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', TSX, MAIN, 'replay', 'run', ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH!, HOME: dir, EPISODIC_CREDENTIALS_FILE: join(dir, 'none'), EPISODIC_API_KEY: key, EPISODIC_BASE_URL: svc.url, ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => done({ code, stdout, stderr }))
  })
}

const common = () => ['--candidate-version', 'cand-v2', '--baseline-version', 'base-v1', '--baseline-episodes', baselines.join(',')]

describe('episodic replay run', () => {
  it('prints the header, run id and portal link, one line per episode, the metrics and the recommendation', async () => {
    const { code, stdout, stderr } = await cli(['--policy', './policy.mjs:policies.v2.act', ...common()])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines[0]).toBe('replay run: candidate cand-v2 vs baseline base-v1, 2 episodes')
    const [, runId] = /^eval run ([0-9a-f-]{36})  (\S+)$/.exec(lines[1]!)!
    expect(lines[1]).toContain(`${svc.url}/portal/eval-runs/${runId}`)
    expect(lines[2]).toMatch(new RegExp(`^\\[1/2\\] ${baselines[0]} -> [0-9a-f]{8}$`))
    expect(lines[3]).toMatch(new RegExp(`^\\[2/2\\] ${baselines[1]} -> [0-9a-f]{8}$`))
    expect(lines[4]).toMatch(/^metric\s+baseline\s+candidate\s+delta$/)
    for (const [i, name] of ['success_rate', 'reward_mean', 'collision_rate', 'time_to_goal_s', 'ood_action_share'].entries()) {
      expect(lines[5 + i]).toMatch(new RegExp(`^${name}\\s`))
    }
    expect(lines[5]).toMatch(/^success_rate\s+1\s+1\s+0\s+same$/)
    expect(lines[10]).toMatch(/^recommendation: HOLD/)
    const stored = await new EpisodicClient({ apiKey: key, baseUrl: svc.url }).getEvalRun(runId!)
    expect(stored).toMatchObject({ status: 'completed', name: 'cand-v2', baseline_policy_version: 'base-v1' })
  })

  it('exits 6 on hold with --fail-on-hold, 0 on ship; reads @file lists and .ts policies', async () => {
    const hold = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--fail-on-hold'])
    expect(hold.code).toBe(6)
    const ship = await cli(['--policy', 'policy.mjs:better', '--candidate-version', 'c3', '--baseline-episodes', '@ids.txt', '--fail-on-hold', '--name', 'nightly'])
    expect(ship.stdout).toMatch(/recommendation: SHIP/)
    expect(ship.code).toBe(0)
    const typed = await cli(['--policy', './typed.ts:act', '--candidate-version', 'c4', '--baseline-episodes', `@${join(dir, 'ids.txt')}`])
    expect(typed.stderr).toBe('')
    expect(typed.code).toBe(0)
  })

  it('loads a policy from an installed package, its subpath exports and default export', async () => {
    const fromDefault = await cli(['--policy', 'lab-policies:act', ...common()])
    expect(fromDefault.stderr).toBe('')
    expect(fromDefault.code).toBe(0)
    const fromSubpath = await cli(['--policy', 'lab-policies/v2:nested.act', ...common()])
    expect(fromSubpath.code).toBe(0)
    const missing = await cli(['--policy', 'no-such-package:act', ...common()])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain('cannot be resolved')
  })

  it('reports a failing policy per episode and keeps going', async () => {
    const { code, stdout, stderr } = await cli(['--policy', 'policy.mjs:crash', ...common()])
    expect(code).toBe(0)
    expect(stdout).toMatch(new RegExp(`\\[1/2\\] ${baselines[0]} -> failed: .*boom`))
    expect(stdout).toMatch(/\[2\/2\] .* -> failed/)
    expect(stderr).toContain('Error: boom')
    expect(stderr).toMatch(/at crash .*policy\.mjs/)
  })

  it('dry run: no eval run, local rollup', async () => {
    const { code, stdout } = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--dry-run'])
    expect(code).toBe(0)
    expect(stdout).toContain('(dry run: no uploads)')
    expect(stdout).toContain('eval run: none (dry run)')
    expect(stdout).toMatch(/\[1\/2\] \S+ -> \(dry run\)/)
    expect(stdout).toMatch(/recommendation: /)
  })

  it('uses --profile from the credentials file', async () => {
    const { code, stdout } = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--profile', 'lab'], { EPISODIC_API_KEY: '', EPISODIC_BASE_URL: '', EPISODIC_CREDENTIALS_FILE: join(dir, 'credentials') })
    expect(code).toBe(0)
    expect(stdout).toContain('recommendation')
    const missing = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--profile', 'nope'], { EPISODIC_CREDENTIALS_FILE: join(dir, 'credentials') })
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain('profile "nope" not found')
  })

  it.each([
    [['--candidate-version', 'c', '--baseline-episodes', 'x'], 2, '--policy is required'],
    [['--policy', 'policy.mjs', '--candidate-version', 'c', '--baseline-episodes', 'x'], 2, 'MODULE:FN'],
    [['--policy', 'policy.mjs:act', '--candidate-version', 'c', '--baseline-episodes', 'x', '--bogus'], 2, 'bogus'],
    [['--policy', 'missing.mjs:act', '--candidate-version', 'c', '--baseline-episodes', 'x'], 3, 'policy module not found'],
    [['--policy', 'policy.mjs:nothing.here', '--candidate-version', 'c', '--baseline-episodes', 'x'], 3, 'no attribute'],
    [['--policy', 'policy.mjs:crash', '--candidate-version', 'c', '--baseline-episodes', '@nofile.txt'], 3, 'cannot read'],
  ])('usage and configuration errors: %j exits %i', async (args, exit, message) => {
    const { code, stderr } = await cli(args as string[])
    expect(code).toBe(exit)
    expect(stderr).toContain(message)
  })

  it('exits 4 for a refused key or a foreign baseline, 5 when the service is unreachable', async () => {
    const args = ['--policy', 'policy.mjs:crash', ...common()]
    const refused = await cli(args, { EPISODIC_API_KEY: `epk_aaaaaaaaaaaa_${'D'.repeat(43)}` })
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain('authentication failed')
    const stranger = (await svc.newTenant()).key
    const foreign = await cli(args, { EPISODIC_API_KEY: stranger })
    expect(foreign.code).toBe(4)
    expect(foreign.stderr).toContain('not found')
    const down = await cli(args, { EPISODIC_BASE_URL: 'http://127.0.0.1:9' })
    expect(down.code).toBe(5)
    expect(down.stderr).toContain('network failure')
  })

  it('documents flags and exit codes in --help', async () => {
    const { code, stdout } = await cli(['--help'])
    expect(code).toBe(0)
    for (const flag of ['--policy', '--candidate-version', '--baseline-episodes', '--baseline-version', '--name', '--dry-run', '--profile', '--fail-on-hold', 'Exit codes']) {
      expect(stdout).toContain(flag)
    }
  })
})
