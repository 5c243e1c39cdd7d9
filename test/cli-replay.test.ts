/**
 * `episodic replay run` as a user runs it against a live service: the
 * spec's output lines, policy resolution (dotted attribute, .mjs and .ts
 * files, @file baseline lists, profiles) and the documented exit codes.
 * The command runs in-process (test/helpers/cli.ts) except one spawned run of
 * the built bin; examples/replay runs as its README says at the end.
 */
import { spawn } from 'node:child_process'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { recordBaseline } from './helpers/baselines.ts'
import { ROOT } from './helpers/build.ts'
import { builtCli, type CliResult, runCli, spawnCli } from './helpers/cli.ts'
import { startService, type TestService } from './helpers/service.ts'

let svc: TestService
let key: string
let baselines: string[]
let dir: string

beforeAll(async () => {
  await builtCli()
  svc = await startService('pglite')
  key = (await svc.newTenant('cli')).key
  const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
  baselines = [await recordBaseline(client), await recordBaseline(client)]
  dir = mkdtempSync(join(tmpdir(), 'episodic-replay-cli-'))
  writeFileSync(
    join(dir, 'policy.mjs'),
    `export const policies = { v2: { act: (obs) => ({ '/joint_states/position': Array.from(obs['/joint_states/position'].data, (x) => x + 0.01) }) } }
export const crash = () => { throw new Error('boom') }
export const slow = async (obs) => (await new Promise((r) => setTimeout(r, 200)), { '/joint_states/position': obs['/joint_states/position'].data })
export const busy = (obs) => { const t = Date.now(); while (Date.now() - t < 400); return { '/joint_states/position': obs['/joint_states/position'].data } }
let calls = 0
export const hangOnce = async (obs) => (calls++ === 2 && (await new Promise((r) => setTimeout(r, 600_000))), { '/joint_states/position': obs['/joint_states/position'].data })
export const better = (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data, _outcome: { collision_count: 0, reward_total: 11, time_to_goal_s: 4 } })
export const huge = (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data, _outcome: { reward_total: 1e16 } })
`,
  )
  writeFileSync(
    join(dir, 'typed.ts'),
    `export function act(obs: Record<string, { data: Float64Array }>): Record<string, unknown> { return { '/joint_states/position': obs['/joint_states/position']!.data } }\n`,
  )
  // A policy package resolved from the working directory (node_modules/lab-policies).
  mkdirSync(join(dir, 'node_modules', 'lab-policies'), { recursive: true })
  writeFileSync(
    join(dir, 'node_modules', 'lab-policies', 'package.json'),
    JSON.stringify({ name: 'lab-policies', type: 'module', exports: { '.': './index.js', './v2': './v2.js' } }),
  )
  writeFileSync(
    join(dir, 'node_modules', 'lab-policies', 'index.js'),
    `export default { act: (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data }) }\n`,
  )
  writeFileSync(
    join(dir, 'node_modules', 'lab-policies', 'v2.js'),
    `export const nested = { act: (obs) => ({ '/joint_states/position': obs['/joint_states/position'].data }) }\n`,
  )
  writeFileSync(join(dir, 'ids.txt'), `${baselines[0]}\n\n${baselines[1]}\n`)
  writeFileSync(join(dir, 'credentials'), `[default]\napi_key = epk_aaaaaaaaaaaa_${'C'.repeat(43)}\n\n[lab]\napi_key = ${key}\nbase_url = ${svc.url}\n`)
})
afterAll(async () => {
  await svc?.close()
  rmSync(dir, { recursive: true, force: true })
  rmSync(join(ROOT, 'examples/replay/baselines.txt'), { force: true })
})

/** The environment a user's shell would give `episodic replay run` here. */
const userEnv = (env: Record<string, string>) => ({
  PATH: process.env.PATH!,
  HOME: dir,
  EPISODIC_CREDENTIALS_FILE: join(dir, 'none'),
  EPISODIC_API_KEY: key,
  EPISODIC_BASE_URL: svc.url,
  ...env,
})

/** `episodic replay run ...args` in-process, in the test folder. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(['replay', 'run', ...args], { cwd: dir, env: userEnv(env) })
}

const common = () => ['--candidate-version', 'cand-v2', '--baseline-version', 'base-v1', '--baseline-episodes', baselines.join(',')]

describe('episodic replay run', () => {
  it('prints the header, run id and portal link, one line per episode, the metrics and the recommendation (built bin)', async () => {
    const { code, stdout, stderr } = await spawnCli(['replay', 'run', '--policy', './policy.mjs:policies.v2.act', ...common()], { cwd: dir, env: userEnv({}) })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines[0]).toBe('replay run: candidate cand-v2 vs baseline base-v1, 2 episodes')
    const [, runId] = /^eval run ([0-9a-f-]{36}) {2}(\S+)$/.exec(lines[1]!)!
    expect(lines[1]).toContain(`${svc.url}/portal/eval-runs/${runId}`)
    expect(lines[2]).toMatch(new RegExp(`^\\[1/2\\] ${baselines[0]} -> [0-9a-f]{8}$`))
    expect(lines[3]).toMatch(new RegExp(`^\\[2/2\\] ${baselines[1]} -> [0-9a-f]{8}$`))
    expect(lines[4]).toMatch(/^metric\s+baseline\s+candidate\s+delta\s+95% interval\s+n\s+mark$/)
    for (const [i, name] of ['success_rate', 'reward_mean', 'collision_rate', 'time_to_goal_s', 'ood_action_share'].entries()) {
      expect(lines[5 + i]).toMatch(new RegExp(`^${name}\\s`))
    }
    expect(lines[5]).toMatch(/^success_rate\s+1\s+1\s+0\s+\[-0\.\d+, \+0\.\d+\]\s+2\s+no clear change$/)
    // What replay measured of the actions, under the table.
    expect(lines[10]).toMatch(
      /^action divergence over 2 episodes: mean L2 distance to the recorded actions 0\.0\d+ \(normalized by the recorded range: 0\.\d+\); outside the recorded range in 40% of steps \(limit 25%\)$/,
    )
    // The policy reported no outcome: the values are the baseline's, and the output says so.
    expect(lines[11]).toBe('success_rate: candidate values copied from the baseline in 2 of 2 episodes (the policy reported none; delta 0 there)')
    // +0.01 on every joint leaves the recorded range at 40% of the steps: the action evidence votes.
    expect(lines[9]).toMatch(/^ood_action_share\s+-\s+0\.4\s+-\s+-\s+0\s+not compared$/)
    expect(stdout).toContain('verdict: HOLD\n  - The candidate acted outside the recorded action range in 40% of steps on average, above the limit of 25%')
    expect(stdout).toContain('note: replay is open-loop: the candidate never changes what it observes')
    expect(lines.at(-1)).toMatch(/^recommendation: HOLD \(verdict hold; /)
    const stored = await new EpisodicClient({ apiKey: key, baseUrl: svc.url }).getEvalRun(runId!)
    expect(stored).toMatchObject({ status: 'completed', name: 'cand-v2', baseline_policy_version: 'base-v1' })
  })

  it('exits 6 on hold and 7 on inconclusive with --fail-on-hold, 0 on ship; reads @file lists and .ts policies', async () => {
    const hold = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--fail-on-hold'])
    expect(hold.stdout).toContain('verdict: HOLD')
    expect(hold.code).toBe(6)
    // With the OOD limit raised, nothing decides either way on 2 episodes; every outcome is the
    // baseline's (no _outcome), so no number of episodes would settle it.
    const inconclusive = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--fail-on-hold', '--max-ood-share', '0.5'])
    expect(inconclusive.stdout).toMatch(/^verdict: INCONCLUSIVE$/m)
    expect(inconclusive.stdout).toContain('  - Only 2 episodes done; ship needs at least 10 (min_episodes).')
    expect(inconclusive.code).toBe(7)
    // Better, but short of min_episodes: the count is what settles it.
    const short = await cli(['--policy', 'policy.mjs:better', ...common(), '--fail-on-hold'])
    expect(short.stdout).toContain('verdict: INCONCLUSIVE (about 10 paired episodes would settle it)')
    expect(short.code).toBe(7)
    const ship = await cli([
      '--policy',
      'policy.mjs:better',
      '--candidate-version',
      'c3',
      '--baseline-episodes',
      '@ids.txt',
      '--fail-on-hold',
      '--name',
      'nightly',
      '--min-episodes',
      '2',
    ])
    expect(ship.stdout).toContain('verdict: SHIP')
    expect(ship.stdout).toMatch(/^reward_mean\s+10\s+11\s+\+1\s+\[\+1, \+1\]\s+2\s+better$/m)
    expect(ship.stdout).toContain('reward_mean: candidate values reported by the policy in 2 of 2 episodes')
    expect(ship.stdout).toMatch(/recommendation: SHIP/)
    expect(ship.code).toBe(0)
    const typed = await cli(['--policy', './typed.ts:act', '--candidate-version', 'c4', '--baseline-episodes', `@${join(dir, 'ids.txt')}`])
    expect(typed.stderr).toBe('')
    expect(typed.code).toBe(0)
  })

  it('loads a TypeScript policy file in an ES module or CommonJS project, or none (built bin)', async () => {
    for (const type of ['module', 'commonjs', null]) {
      const project = mkdtempSync(join(dir, 'ts-project-'))
      if (type) writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'lab', type }))
      writeFileSync(join(project, 'policy.ts'), readFileSync(join(dir, 'typed.ts')))
      const typed = await spawnCli(['replay', 'run', '--policy', './policy.ts:act', ...common(), '--dry-run'], { cwd: project, env: userEnv({}) })
      expect(typed.code, `${type}: ${typed.stderr}`).toBe(0)
      expect(typed.stdout).toMatch(/\[2\/2\] \S+ -> \(dry run\)/)
    }
  }, 60_000)

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
    expect(code).toBe(8) // every episode failed: nothing was compared (issue 16)
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
    expect(stdout).toMatch(/^metric\s+baseline\s+candidate\s+delta\s+95% interval\s+n\s+mark$/m)
    expect(stdout).toContain('verdict: HOLD')
    expect(stdout).toMatch(/recommendation: /)
    // The same code and a seeded bootstrap: a second dry run prints the same summary.
    const again = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--dry-run'])
    expect(again.stdout).toBe(stdout)
  })

  it('--json: one JSON document on stdout (run, results, summary), progress on stderr', async () => {
    const { code, stdout, stderr } = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--dry-run', '--json'])
    expect(code).toBe(0)
    const report = JSON.parse(stdout)
    expect(report).toMatchObject({ eval_run_id: null, dry_run: true, candidate_policy_version: expect.any(String) })
    expect(report.results.map((r: { status: string }) => r.status)).toEqual(['done', 'done'])
    expect(report.results[0].metrics.steps).toBeGreaterThan(0)
    expect(['ship', 'hold', 'inconclusive']).toContain(report.summary.verdict)
    expect(report.summary.success_rate).toHaveProperty('n')
    expect(stderr).toMatch(/\[1\/2\] \S+ -> \(dry run\)/)
    expect(stderr).toContain('verdict: ')
  })

  it('--json on a stored run whose rollup holds a whole number past 2^53 (a reward of 1e16)', async () => {
    // The exact parser read the summary's 1e16 as a bigint and JSON.stringify threw after the run was finalized.
    const { code, stdout, stderr } = await cli(['--policy', 'policy.mjs:huge', ...common(), '--json'])
    expect([code, stderr]).toEqual([0, expect.not.stringContaining('unexpected failure')])
    const report = JSON.parse(stdout)
    expect(report.summary.reward_mean.candidate).toBe(1e16)
    expect(stderr).toMatch(/^reward_mean\s+\S+\s+10000000000000000\s/m)
  })

  it('uses --profile from the credentials file', async () => {
    const { code, stdout } = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--profile', 'lab'], {
      EPISODIC_API_KEY: '',
      EPISODIC_BASE_URL: '',
      EPISODIC_CREDENTIALS_FILE: join(dir, 'credentials'),
    })
    expect(code).toBe(0)
    expect(stdout).toContain('recommendation')
    const missing = await cli(['--policy', 'policy.mjs:policies.v2.act', ...common(), '--profile', 'nope'], {
      EPISODIC_CREDENTIALS_FILE: join(dir, 'credentials'),
    })
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
    [
      ['--policy', 'policy.mjs:crash', '--candidate-version', 'c', '--baseline-episodes', 'x', '--min-episodes', '0'],
      2,
      '--min-episodes must be an integer from 1 to 10000',
    ],
    [
      ['--policy', 'policy.mjs:crash', '--candidate-version', 'c', '--baseline-episodes', 'x', '--max-ood-share', '1.5'],
      2,
      '--max-ood-share must be a number from 0 to 1',
    ],
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
    for (
      const flag of [
        '--policy',
        '--candidate-version',
        '--baseline-episodes',
        '--baseline-version',
        '--name',
        '--dry-run',
        '--profile',
        '--fail-on-hold',
        '--min-episodes',
        '--max-ood-share',
        'open-loop',
        'Exit codes',
      ]
    ) {
      expect(stdout).toContain(flag)
    }
  })

  it('runs examples/replay as its README says: record the baselines, then replay the example policy', async () => {
    const recorded = await new Promise<{ code: number | null; out: string }>((done) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'examples/replay/record-baselines.ts'], { cwd: ROOT, env: { ...process.env, ...userEnv({}) } })
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (out += d))
      child.on('close', (code) => done({ code, out }))
    })
    expect(recorded.code, recorded.out).toBe(0)
    const list = join(ROOT, 'examples/replay/baselines.txt')
    expect(existsSync(list)).toBe(true)
    expect(readFileSync(list, 'utf8').trim().split('\n')).toHaveLength(3)
    const replay = await runCli([
      'replay',
      'run',
      '--policy',
      'examples/replay/policy.mjs:act',
      '--candidate-version',
      'lookahead-v2',
      '--baseline-version',
      'scripted-v1',
      '--baseline-episodes',
      '@examples/replay/baselines.txt',
    ], { cwd: ROOT, env: userEnv({}) })
    expect(replay.code, replay.stdout + replay.stderr).toBe(0)
    expect(replay.stdout).toMatch(/\[3\/3\] \S+ -> [0-9a-f]{8}/)
    expect(replay.stdout).toMatch(/recommendation: (SHIP|HOLD)/)
    // One collision fewer in three episodes: better on the point estimate, not a clear change yet.
    expect(replay.stdout).toMatch(/^collision_rate\s+0\.333\s+0\s+-0\.333\s+\[-0\.\d+, \+0\.\d+\]\s+3\s+no clear change$/m)
    expect(replay.stdout).toMatch(/^verdict: (SHIP|HOLD|INCONCLUSIVE)/m)
  })
})

it('Ctrl-C says which eval run stays pending and how to go on; --resume replays only the baselines left, then finalizes', async () => {
  const [command, prefix] = await builtCli()
  const flags = ['--policy', './policy.mjs:slow', '--policy-timeout', '30', '--prefetch-mb', '64']
  const child = spawn(command, [...prefix, 'replay', 'run', ...flags, ...common()], { cwd: dir, env: userEnv({}) })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  // 20 steps of 200 ms: the second episode is 4 s from done when the first one's line appears.
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d
      if (stdout.includes('[1/2]')) resolve()
    })
  })
  child.kill('SIGINT')
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  const runId = /^eval run ([0-9a-f-]{36}) /m.exec(stdout)![1]!
  expect(code).toBe(130)
  expect(stderr).toContain(`episodic: interrupted; eval run ${runId} stays pending with 1 of 2 results (${svc.url}/portal/eval-runs/${runId})`)
  // Every flag that drives the policy comes along; those that shaped the run do not.
  expect(stderr).toContain(`go on with: episodic replay run --resume ${runId} --policy ./policy.mjs:slow --policy-timeout 30 --prefetch-mb 64\n`)
  const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
  const before = await client.getEvalRun(runId)
  expect(before.results.map((r) => r.status)).toEqual(['done', 'pending'])

  const resumed = await cli(['--policy', './policy.mjs:policies.v2.act', '--resume', runId, '--json'])
  expect(resumed.code, resumed.stderr).toBe(0)
  expect(resumed.stderr).toContain('replay run: candidate cand-v2 vs baseline base-v1, 2 episodes')
  expect(resumed.stderr).toContain('resuming: 1 of 2 episodes already have a result; replaying the other 1')
  expect(resumed.stderr).not.toContain('[1/2]')
  expect(resumed.stderr).toMatch(new RegExp(`^\\[2/2\\] ${baselines[1]} -> [0-9a-f]{8}$`, 'm'))
  const report = JSON.parse(resumed.stdout)
  expect(report.eval_run_id).toBe(runId)
  // Every row of the run, the earlier attempt's too, and the rollup over both.
  expect(report.results.map((r: { baseline_episode_id: string; status: string }) => [r.baseline_episode_id, r.status])).toEqual([[baselines[0], 'done'], [
    baselines[1],
    'done',
  ]])
  expect(report.results[0].replay_episode_id).toBe(before.results[0]!.replay_episode_id)
  expect(report.summary.success_rate.n).toBe(2)
  const after = await client.getEvalRun(runId)
  expect(after.status).toBe('completed')
  expect(after.results[0]).toEqual(before.results[0])
  // The slow policy's episode (+0) and v2's (+0.01 on every joint) both count.
  expect(after.results[1]!.metrics!.action_l2_mean).toBeGreaterThan(0)
  expect(after.results[0]!.metrics!.action_l2_mean).toBe(0)

  // Nothing is left to resume: a usage error, and the run is unchanged.
  const again = await cli(['--policy', './policy.mjs:policies.v2.act', '--resume', runId])
  expect(again.code).toBe(2)
  expect(again.stderr).toContain(`--resume: eval run ${runId} is already completed`)
  expect((await client.getEvalRun(runId)).updated_at).toBe(after.updated_at)
}, 60_000)

it('npm run episodic: Ctrl-C while the policy holds the thread still prints how to go on (under tsx as a parent process it was killed)', async () => {
  // A terminal's Ctrl-C signals the whole foreground process group: npm, and the CLI under it.
  const child = spawn('npm', ['--prefix', ROOT, 'run', '-s', 'episodic', '--', 'replay', 'run', '--policy', './policy.mjs:busy', ...common()], {
    cwd: dir,
    env: userEnv({}),
    detached: true,
  })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d
      if (stdout.includes('[1/2]')) resolve()
    })
  })
  process.kill(-child.pid!, 'SIGINT')
  await new Promise((resolve) => child.once('close', resolve))
  const runId = /^eval run ([0-9a-f-]{36}) /m.exec(stdout)![1]!
  expect(stderr).toContain(`go on with: episodic replay run --resume ${runId} --policy ./policy.mjs:busy\n`)
}, 120_000)

it('exits when the run is done, though a policy call abandoned by --policy-timeout is still waiting (built bin)', async () => {
  const started = Date.now()
  const { code, stdout, stderr } = await spawnCli(['replay', 'run', '--policy', './policy.mjs:hangOnce', '--policy-timeout', '1', ...common()], {
    cwd: dir,
    env: userEnv({}),
  })
  expect(code, stderr).toBe(0)
  expect(stdout).toMatch(/^\[1\/2\] \S+ -> failed: .*1 s/m)
  expect(stdout).toMatch(/^recommendation: HOLD/m)
  // The abandoned call waits 600 s; the command is done long before (generous for a busy machine).
  expect(Date.now() - started).toBeLessThan(300_000)
}, 600_000)

/**
 * Runs `body` with the base URL of a proxy in front of the service. `refuse`
 * closes a request's connection before it reaches the service; `lose`, after
 * the service answered it (the answer is lost).
 */
async function throughProxy(
  hooks: { refuse?: (req: IncomingMessage) => boolean; lose?: (req: IncomingMessage) => boolean },
  body: (base: string) => Promise<void>,
): Promise<void> {
  const proxy = createServer((req, res) => {
    if (hooks.refuse?.(req)) return void req.socket.destroy()
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const headers = Object.fromEntries(
        ['authorization', 'content-type', 'idempotency-key'].flatMap((h) => (req.headers[h] ? [[h, String(req.headers[h])]] : [])),
      )
      const upstream = await fetch(`${svc.url}${req.url}`, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
        redirect: 'manual',
      })
      const bytes = Buffer.from(await upstream.arrayBuffer())
      if (hooks.lose?.(req)) return void req.socket.destroy()
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(bytes)
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  try {
    await body(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`)
  } finally {
    proxy.closeAllConnections()
    await new Promise((resolve) => proxy.close(resolve))
  }
}

it('a network failure mid-run exits 5, saying which eval run stays pending and how to go on', async () => {
  // The proxy goes dark once the first result is up.
  let dark = false
  const darkAfterResult = (req: IncomingMessage) => (req.url!.endsWith('/result') && (dark = true), false)
  await throughProxy({ refuse: () => dark, lose: darkAfterResult }, async (base) => {
    const failed = await cli(['--policy', './policy.mjs:policies.v2.act', '--policy-timeout', '20', ...common()], { EPISODIC_BASE_URL: base })
    expect(failed.code, failed.stderr).toBe(5)
    const runId = /^eval run ([0-9a-f-]{36}) /m.exec(failed.stdout)![1]!
    expect(failed.stderr).toMatch(/^episodic: .*network failure/m)
    expect(failed.stderr).toContain(`eval run ${runId} stays pending with 1 of 2 results`)
    expect(failed.stderr).toContain(`go on with: episodic replay run --resume ${runId} --policy ./policy.mjs:policies.v2.act --policy-timeout 20\n`)
    const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
    expect((await client.getEvalRun(runId)).results.map((r) => r.status)).toEqual(['done', 'pending'])
  })
})

it('a lost answer is asked again: one replay episode per baseline, every result up, exit 0', async () => {
  // The proxy loses the answer to the first replay-episode open and to the first result.
  const lost = new Set<string>()
  const opens: string[] = []
  const loseFirst = (req: IncomingMessage) => {
    const what = req.url === '/api/ingest/episode' ? 'open' : req.url!.endsWith('/result') ? 'result' : ''
    if (what === 'open') opens.push(String(req.headers['idempotency-key']))
    if (!what || lost.has(what)) return false
    lost.add(what)
    return true
  }
  await throughProxy({ lose: loseFirst }, async (base) => {
    const done = await cli(['--policy', './policy.mjs:policies.v2.act', ...common(), '--json'], { EPISODIC_BASE_URL: base })
    expect(done.code, done.stderr).toBe(0)
    expect([...lost].sort()).toEqual(['open', 'result'])
    // The lost open was sent again with its Idempotency-Key, and answered with the episode it had made.
    expect(opens).toHaveLength(3)
    expect(opens[0]).toMatch(/^replay-[0-9a-f-]{36}$/)
    expect(opens[1]).toBe(opens[0])
    const report = JSON.parse(done.stdout)
    const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
    const run = await client.getEvalRun(report.eval_run_id)
    expect(run.results.map((r) => r.status)).toEqual(['done', 'done'])
    const replays = await client.listEpisodes({ source: 'replay', limit: 200 })
    const ofRun = replays.items.filter((e) => e.metadata.eval_run_id === report.eval_run_id)
    expect(ofRun.map((e) => e.episode_id).sort()).toEqual(run.results.map((r) => r.replay_episode_id).sort())
    expect(ofRun.map((e) => e.status)).toEqual(['ready', 'ready'])
  })
})

it('--resume: a malformed id, or a flag that shapes a new run beside it, is a usage error; an unknown run exits 4', async () => {
  const policy = ['--policy', './policy.mjs:policies.v2.act']
  const malformed = await cli([...policy, '--resume', 'nope'])
  expect(malformed.code).toBe(2)
  expect(malformed.stderr).toContain('--resume: "nope" is not an eval run id (a UUID)')
  const id = '0190a6d2-0000-7000-8000-000000000000'
  for (const extra of [['--candidate-version', 'v3'], ['--baseline-episodes', baselines[0]!], ['--dry-run'], ['--min-episodes', '3']]) {
    const r = await cli([...policy, '--resume', id, ...extra])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain(`--resume goes on with the run as it was created: drop ${extra[0]}`)
  }
  const unknown = await cli([...policy, '--resume', id])
  expect(unknown.code, unknown.stderr).toBe(4)
  expect(unknown.stderr).toContain('not found')
})
