/**
 * The policies robotics teams have, through `episodic replay run` against a
 * live service: Python callables through the bridge (numpy, stateful with
 * reset, raising, wrong shapes), an openpi-protocol policy server, and
 * `--concurrency`. Each stored metric blob must equal the one the JavaScript
 * twin of the policy (test/fixtures/policies/policies.mjs) produces.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { pythonPolicy } from '../src/replay/python/policy.ts'
import { createRun } from '../src/replay/eval-run.ts'
import { runAgainst } from '../src/replay/run.ts'
import { recordBaseline } from './helpers/baselines.ts'
import { BRIDGE_PYTHON, describeWithPython, SERVER_PYTHON } from './helpers/policy-python.ts'
import { type CliResult, runCli } from './helpers/cli.ts'
import { startService, type TestService } from './helpers/service.ts'

const TIMEOUT = 300_000
let svc: TestService
let key: string
let client: EpisodicClient
let baselines: string[]
let nine: string[]
let dir: string

beforeAll(async () => {
  svc = await startService('pglite')
  key = (await svc.newTenant('policies')).key
  client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
  // Nine baselines in three kinds (i % 3 has the same artifacts and outcomes): the --concurrency
  // cases replay more episodes than three, and a run, dry or not, names each baseline once.
  nine = []
  for (let i = 0; i < 9; i++) {
    nine.push(await recordBaseline(client, { success: i % 3 !== 1, reward_total: 10 + (i % 3), collision_count: i % 3, time_to_goal_s: 5 }))
  }
  baselines = nine.slice(0, 3)
  dir = mkdtempSync(join(tmpdir(), 'episodic-policies-'))
  cpSync(resolve('test/fixtures/policies'), dir, { recursive: true })
}, TIMEOUT)
afterAll(async () => {
  await svc?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** `episodic replay run ...args` in this process (test/helpers/cli.ts), from the fixtures' folder. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(['replay', 'run', ...args], {
    cwd: dir,
    env: { HOME: dir, EPISODIC_CREDENTIALS_FILE: join(dir, 'none'), EPISODIC_API_KEY: key, EPISODIC_BASE_URL: svc.url, ...env },
  })
}

type Row = { status: string; metrics: Record<string, unknown> | null; error: string | null }

/** Runs `replay run` with `policyArgs` over the baselines and returns the stored result rows by baseline id. */
async function stored(policyArgs: string[], version: string): Promise<{ run: CliResult; rows: Record<string, Row> }> {
  const run = await cli([...policyArgs, '--candidate-version', version, '--baseline-episodes', baselines.join(',')])
  const runId = /^eval run ([0-9a-f-]{36}) /m.exec(run.stdout)?.[1]
  // 8: every episode failed (nothing compared), which the failure cases below expect.
  if ((run.code !== 0 && run.code !== 8) || !runId) throw new Error(`replay run exited ${run.code}:\n${run.stdout}\n${run.stderr}`)
  const rows: Record<string, Row> = {}
  for (const r of (await client.getEvalRun(runId)).results) rows[r.baseline_episode_id] = { status: r.status, metrics: r.metrics, error: r.error }
  return { run, rows }
}

/**
 * A row's metric blob without the outcome the candidate reported: a policy server reports
 * none, so what it shares with its JavaScript twin is the action evidence.
 */
function actionEvidence(row: Row): Record<string, unknown> {
  const { reward_total_candidate: _reward, outcome_source: _source, ...evidence } = row.metrics!
  return evidence
}

const memo = new Map<string, Promise<Record<string, Row>>>()
/** The JavaScript twin's rows (run once per policy). */
function twin(fn: string): Promise<Record<string, Row>> {
  if (!memo.has(fn)) memo.set(fn, stored(['--policy', `./policies.mjs:${fn}`], `js-${fn}`).then((r) => r.rows))
  return memo.get(fn)!
}

describeWithPython('Python policies through the bridge (replay run --policy py:...)', BRIDGE_PYTHON, ['numpy'], () => {
  const python = ['--python', BRIDGE_PYTHON]

  it("a numpy policy gets numpy arrays of the recorded dtype and shape; its blobs equal the JavaScript twin's, also with --concurrency 2", async () => {
    const js = await twin('offset')
    for (const row of Object.values(js)) expect(row).toMatchObject({ status: 'done', metrics: { reward_total_candidate: 12.5 } })
    const { run, rows } = await stored(['--policy', 'py:lab.numpy_policy:offset', ...python], 'py-offset')
    expect(run.stderr).toBe('')
    expect(rows).toEqual(js)
    const concurrent = await stored(['--policy', 'py:lab.numpy_policy:offset', ...python, '--concurrency', '2'], 'py-offset-c2')
    expect(concurrent.rows).toEqual(js)
  }, TIMEOUT)

  it('a stateful policy file with reset() starts each episode fresh, matching a JavaScript policy that uses the step context', async () => {
    const js = await twin('byStep')
    const { rows } = await stored(['--policy', './stateful.py:act', ...python], 'py-stateful')
    expect(rows).toEqual(js)
    // Without the reset the second episode would continue counting: the blobs would differ.
    expect(rows[baselines[1]!]!.metrics!.action_l2_mean).toBeGreaterThan(0)
  }, TIMEOUT)

  it('a Python exception fails that episode with the traceback in its result row; the run goes on', async () => {
    const js = await twin('offset')
    const { run, rows } = await stored(['--policy', 'py:lab.numpy_policy:raises', ...python], 'py-raises')
    expect(run.stdout).toMatch(new RegExp(`\\[2/3\\] ${baselines[1]} -> failed: ValueError: torque limit exceeded at step 4`))
    const failed = rows[baselines[1]!]!
    expect(failed.status).toBe('failed')
    expect(failed.error).toContain('Traceback (most recent call last):')
    expect(failed.error).toMatch(/numpy_policy\.py", line \d+, in raises/)
    expect(rows[baselines[0]!]).toEqual(js[baselines[0]!])
    expect(rows[baselines[2]!]).toEqual(js[baselines[2]!])
  }, TIMEOUT)

  it('wrong action shapes fail the episode, naming the key and both shapes', async () => {
    const { run, rows } = await stored(['--policy', 'py:lab.numpy_policy:wrong_shape', ...python], 'py-shape')
    expect(run.code).toBe(8)
    for (const row of Object.values(rows)) {
      expect(row.status).toBe('failed')
      expect(row.error).toContain('/joint_states/position')
      expect(row.error).toMatch(/\[6\].*\[7\]/)
    }
  }, TIMEOUT)

  it('returned keys the baseline lacks are ignored whatever they hold; a baseline key that is not numbers fails the episode naming it', async () => {
    const js = await twin('offset')
    const extras = await stored(['--policy', 'py:lab.numpy_policy:with_extras', ...python], 'py-extras')
    expect(extras.rows).toEqual(js)
    const { rows } = await stored(['--policy', 'py:lab.numpy_policy:text_action', ...python], 'py-text')
    for (const row of Object.values(rows)) {
      expect(row.status).toBe('failed')
      expect(row.error).toMatch(/^MetricsError: action '\/joint_states\/position' at step 0 has dtype <U4; expected numbers$/)
    }
  }, TIMEOUT)

  it('pythonPolicy from the library: a crashed process fails its episode, the next episode starts a new one', async () => {
    const policy = pythonPolicy({ module: 'lab.numpy_policy:crash', python: BRIDGE_PYTHON, cwd: dir })
    try {
      const run = await createRun({ candidatePolicyVersion: 'crash', baselineEpisodeIds: baselines, client, dryRun: true })
      const results = await runAgainst(run, policy, { stderr: () => {} })
      expect(results.map((r) => r.status)).toEqual(['done', 'failed', 'done'])
      expect(results[1]!.error).toContain('the Python policy process exited (code 3)')
      const js = await twin('offset')
      expect(results[2]!.metrics).toEqual(js[baselines[2]!]!.metrics)
    } finally {
      await policy.close()
    }
  }, TIMEOUT)

  it('--policy-timeout: a policy that never answers fails that episode, its process is stopped, and the run goes on', async () => {
    const js = await twin('offset')
    // 0.25 s per step: 5 s for a 20-step episode that takes milliseconds.
    const { run, rows } = await stored(['--policy', 'py:lab.numpy_policy:hangs', ...python, '--policy-timeout', '0.25'], 'py-hangs')
    expect(run.code).toBe(0)
    expect(rows[baselines[1]!]).toMatchObject({
      status: 'failed',
      error: 'PythonPolicyTimeout: the Python policy did not answer within 5 s (episode 2); its process was stopped',
    })
    expect(rows[baselines[0]!]).toEqual(js[baselines[0]!])
    expect(rows[baselines[2]!]).toEqual(js[baselines[2]!])
    // A JavaScript policy's promise is timed the same way (the late promise is given up on).
    const javascript = await stored(['--policy', './policies.mjs:hangs', '--policy-timeout', '1'], 'js-hangs')
    expect(javascript.rows[baselines[1]!]).toMatchObject({ status: 'failed', error: 'PolicyTimeout: the policy did not answer within 1 s (episode 2, step 2)' })
    expect(javascript.rows[baselines[2]!]).toEqual(js[baselines[2]!])
    expect(
      (await cli(['--policy', 'py:lab.numpy_policy:offset', '--policy-timeout', '0', '--candidate-version', 'x', '--baseline-episodes', baselines[0]!])).code,
    ).toBe(2)
  }, TIMEOUT)

  it('a crash is noticed even while a process the policy forked still holds the output pipe', async () => {
    const policy = pythonPolicy({ module: 'lab.numpy_policy:forks_then_crashes', python: BRIDGE_PYTHON, cwd: dir })
    const started = Date.now()
    try {
      const run = await createRun({ candidatePolicyVersion: 'forked', baselineEpisodeIds: baselines, client, dryRun: true })
      const results = await runAgainst(run, policy, { stderr: () => {} })
      expect(results.map((r) => r.status)).toEqual(['done', 'failed', 'done'])
      expect(results[1]!.error).toBe('Error: the Python policy process exited (code 3); see its output above')
      // Not held until the worker's 60 s sleep ends.
      expect(Date.now() - started).toBeLessThan(45_000)
    } finally {
      await policy.close()
      const pidFile = join(dir, 'forked.pid')
      if (existsSync(pidFile)) {
        try {
          process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL')
        } catch {
          // already gone
        }
        rmSync(pidFile)
      }
    }
  }, TIMEOUT)

  it('with --concurrency, a crash fails only the episode that caused it; the ones queued behind it run on the new process', async () => {
    const js = await twin('offset')
    // Nine episodes, all in flight: the crash (episode 1, step 2) has others queued behind it.
    const ids = nine
    const policy = pythonPolicy({ module: 'lab.numpy_policy:crash', python: BRIDGE_PYTHON, cwd: dir })
    try {
      const run = await createRun({ candidatePolicyVersion: 'crash-c', baselineEpisodeIds: ids, client, dryRun: true })
      const results = await runAgainst(run, policy, { stderr: () => {}, concurrency: 9 })
      expect(results.map((r) => r.status)).toEqual(['done', 'failed', 'done', 'done', 'done', 'done', 'done', 'done', 'done'])
      expect(results[1]!.error).toBe('Error: the Python policy process exited (code 3); see its output above')
      for (const [i, result] of results.entries()) if (i !== 1) expect(result.metrics).toEqual(js[baselines[i % 3]!]!.metrics)
    } finally {
      await policy.close()
    }
  }, TIMEOUT)

  it('an import error stops before any run, with exit code 3 and the Python error', async () => {
    const missing = await cli(['--policy', 'py:lab.no_such_module:act', ...python, '--candidate-version', 'x', '--baseline-episodes', baselines[0]!])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain("ModuleNotFoundError: No module named 'lab.no_such_module'")
    const noAttr = await cli(['--policy', 'py:lab.numpy_policy:nope', ...python, '--candidate-version', 'x', '--baseline-episodes', baselines[0]!])
    expect(noAttr.code).toBe(3)
    expect(noAttr.stderr).toContain("has no attribute 'nope'")
  }, TIMEOUT)
})

describeWithPython(
  'a policy server speaking the openpi websocket protocol (replay run --policy ws://...)',
  SERVER_PYTHON,
  ['numpy', 'msgpack', 'websockets'],
  () => {
    const servers: ChildProcess[] = []
    afterAll(() => {
      for (const server of servers) server.kill()
    })
    async function startServer(args: string[] = []): Promise<string> {
      const server = spawn(SERVER_PYTHON, [join(dir, 'openpi_server.py'), ...args], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { PATH: process.env.PATH!, PYTHONDONTWRITEBYTECODE: '1' },
      })
      servers.push(server)
      const [line] = await Promise.race([
        createInterface({ input: server.stdout! })[Symbol.asyncIterator]().next().then((r) => [r.value as string]),
        new Promise<never>((_, reject) => server.once('exit', (code) => reject(new Error(`policy server exited (${code})`)))),
      ])
      return `ws://127.0.0.1:${line!.trim()}`
    }
    const maps = ['--obs-map', '/joint_states/position=observation/state,/camera/depth=observation/image', '--action-map', 'actions=/joint_states/position']

    it('one infer round trip per step, keys mapped both ways: the same blobs as the JavaScript twin', async () => {
      const url = await startServer()
      const js = await twin('offset')
      const { run, rows } = await stored(['--policy', url, ...maps], 'server-offset')
      expect(run.stderr).toBe('')
      // The server does not report outcomes, so those (and their source) come from the baseline; the action evidence is the twin's.
      for (const id of baselines) {
        expect(actionEvidence(rows[id]!)).toEqual(actionEvidence(js[id]!))
      }
    }, TIMEOUT)

    it('a server-side exception fails that episode with the server traceback; the next episode reconnects', async () => {
      const url = await startServer(['--fail-at', '25'])
      const { rows } = await stored(['--policy', url, ...maps, '--concurrency', '1'], 'server-fail')
      expect(rows[baselines[0]!]!.status).toBe('done')
      expect(rows[baselines[1]!]!.status).toBe('failed')
      expect(rows[baselines[1]!]!.error).toContain('RuntimeError: policy server failure on request 25')
      expect(rows[baselines[1]!]!.error).toContain('Traceback (most recent call last):')
      expect(rows[baselines[2]!]!.status).toBe('done')
    }, TIMEOUT)

    it('with --concurrency, a server exception fails only its own episode: the other one in flight goes on on a new connection', async () => {
      const url = await startServer(['--fail-at', '25'])
      const js = await twin('offset')
      const { rows } = await stored(['--policy', url, ...maps, '--concurrency', '2'], 'server-fail-c2')
      const failed = baselines.filter((id) => rows[id]!.status === 'failed')
      expect(failed).toHaveLength(1)
      expect(rows[failed[0]!]!.error).toContain('RuntimeError: policy server failure on request 25')
      for (const id of baselines.filter((id) => !failed.includes(id))) {
        expect(actionEvidence(rows[id]!)).toEqual(actionEvidence(js[id]!))
      }
    }, TIMEOUT)

    it('a server that closes its connections cleanly (between episodes or mid-episode) loses no step: they go out again on a new one', async () => {
      const js = await twin('offset')
      // Every 20 answers: right after each episode's last step, while the next episode is already read ahead;
      // every 25: mid-episode, with up to 16 steps sent ahead and waiting; every 3: many times in each episode.
      for (const every of ['20', '25', '3']) {
        const url = await startServer(['--close-every', every])
        const { rows } = await stored(['--policy', url, ...maps], `server-close-${every}`)
        for (const id of baselines) {
          expect(rows[id]!.status, rows[id]!.error ?? '').toBe('done')
          expect(actionEvidence(rows[id]!)).toEqual(actionEvidence(js[id]!))
        }
      }
    }, TIMEOUT)

    it('a server that dies fails the episode it was answering; once restarted, the run goes on', async () => {
      const url = await startServer(['--exit-at', '25'])
      const port = new URL(url).port
      const died = servers.at(-1)!
      // A supervisor's restart: the same port, a moment after the crash.
      const restarted = new Promise<void>((resolve) => died.once('exit', () => setTimeout(() => void startServer(['--port', port]).then(() => resolve()), 300)))
      const { run, rows } = await stored(['--policy', url, ...maps], 'server-crash')
      await restarted
      expect(run.code, run.stderr).toBe(0)
      // Its 25th request is episode 1's step 4; answers it wrote just before dying may be lost with it.
      expect(rows[baselines[1]!]!.status).toBe('failed')
      expect(rows[baselines[1]!]!.error).toMatch(/^Error: policy server ws:\/\/127\.0\.0\.1:\d+ closed the connection \(code 1006\) \(episode 2, step [0-4]\)$/)
      expect([rows[baselines[0]!]!.status, rows[baselines[2]!]!.status]).toEqual(['done', 'done'])
    }, TIMEOUT)

    it('--policy-timeout: a server that stops answering fails that episode; the next episode reconnects', async () => {
      const url = await startServer(['--stall-at', '25'])
      const { rows } = await stored(['--policy', url, ...maps, '--policy-timeout', '1'], 'server-stall')
      expect(rows[baselines[1]!]).toMatchObject({
        status: 'failed',
        error: `PolicyServerTimeout: policy server ${url} did not answer within 1 s (episode 2, step 4); the connection was closed`,
      })
      expect([rows[baselines[0]!]!.status, rows[baselines[2]!]!.status]).toEqual(['done', 'done'])
    }, TIMEOUT)

    it('--action-horizon: a server answering with action chunks is asked every H steps, one row per step', async () => {
      const url = await startServer(['--chunk', '4'])
      const js = await twin('chunked4')
      const { run, rows } = await stored(['--policy', url, ...maps, '--action-horizon', '4', '--concurrency', '2'], 'server-chunk')
      expect(run.stderr).toBe('')
      for (const id of baselines) {
        expect(actionEvidence(rows[id]!)).toEqual(actionEvidence(js[id]!))
      }
      // Without the horizon every step's reply is a [4, 7] chunk where a [7] action is recorded.
      const plain = await stored(['--policy', url, ...maps], 'server-chunk-plain')
      for (const row of Object.values(plain.rows)) {
        expect(row).toMatchObject({ status: 'failed', error: expect.stringContaining('candidate shape [4, 7] does not match baseline shape [7] per step') })
        expect(row.error).toContain('take --action-horizon 4')
      }
      // A horizon longer than the chunks: the episode fails naming the key, its rows and the horizon.
      const long = await stored(['--policy', url, ...maps, '--action-horizon', '8'], 'server-chunk-long')
      for (const row of Object.values(long.rows)) {
        expect(row).toMatchObject({ status: 'failed', error: expect.stringContaining('policy server\'s "/joint_states/position" has 4 steps') })
        expect(row.error).toContain('the action horizon is 8')
      }
    }, TIMEOUT)

    it('--prompt-field / --prompt: each episode sends its baseline\'s task as "prompt", the fixed text where it has none', async () => {
      const tasked = [await recordBaseline(client, { success: true, task: 'pick the cup' }), await recordBaseline(client, { success: true })]
      const log = join(dir, 'prompts.log')
      const url = await startServer(['--log', log])
      const common = [...maps, '--candidate-version', 'prompted', '--baseline-episodes', tasked.join(','), '--dry-run']
      const run = await cli(['--policy', url, '--prompt-field', 'task', '--prompt', 'do the task', ...common])
      expect(run.code, run.stderr).toBe(0)
      const prompts = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown)
      const switchAt = prompts.indexOf('do the task')
      expect(switchAt).toBeGreaterThan(0)
      expect(prompts.slice(0, switchAt).every((p) => p === 'pick the cup')).toBe(true)
      expect(prompts.slice(switchAt).every((p) => p === 'do the task')).toBe(true)
      // Without the fallback, the baseline lacking the field fails; the other replays.
      const strict = await cli(['--policy', url, '--prompt-field', 'task', ...common])
      expect(strict.code, strict.stderr).toBe(0)
      expect(strict.stderr).toContain(`baseline ${tasked[1]} has no text metadata.task for the prompt (--prompt-field)`)
      expect(strict.stdout).toMatch(/\[1\/2\] \S+ -> /)
      // Policy-server flags with another kind of policy are a usage error.
      const misuse = await cli(['--policy', './policies.mjs:offset', '--prompt', 'x', '--candidate-version', 'x', '--baseline-episodes', tasked[0]!])
      expect(misuse.code).toBe(2)
      expect(misuse.stderr).toContain('--prompt: only for a policy server (--policy ws://host:port)')
    }, TIMEOUT)

    it("a server that wants a key gets EPISODIC_POLICY_API_KEY as openpi's Authorization: Api-Key header", async () => {
      const url = await startServer(['--api-key', 's3cret'])
      const args = ['--policy', url, ...maps, '--candidate-version', 'keyed', '--baseline-episodes', baselines[0]!, '--dry-run']
      const refused = await cli(args)
      expect(refused.code).toBe(3)
      expect(refused.stderr).toContain(`cannot connect to policy server ${url}: Unexpected server response: 401`)
      expect(refused.stderr).toContain('does the server want a key? the CLI sends EPISODIC_POLICY_API_KEY')
      const wrong = await cli(args, { EPISODIC_POLICY_API_KEY: 'guess' })
      expect(wrong.code).toBe(3)
      const keyed = await cli(args, { EPISODIC_POLICY_API_KEY: 's3cret' })
      expect(keyed.code, keyed.stderr).toBe(0)
      expect(keyed.stdout).toMatch(/\[1\/1\] \S+ -> /)
    }, TIMEOUT)

    it('a server that is not there is a configuration error before any run', async () => {
      const down = await cli(['--policy', 'ws://127.0.0.1:9', ...maps, '--candidate-version', 'x', '--baseline-episodes', baselines[0]!])
      expect(down.code).toBe(3)
      expect(down.stderr).toContain('cannot connect to policy server ws://127.0.0.1:9')
    }, TIMEOUT)

    it('an address no WebSocket can open, or two keys mapped onto one name, is a usage error (exit 2)', async () => {
      const run = (args: string[]) => cli([...args, '--candidate-version', 'x', '--baseline-episodes', baselines[0]!, '--dry-run'])
      const port = await run(['--policy', 'ws://127.0.0.1:99999'])
      expect([port.code, port.stderr]).toEqual([2, expect.stringContaining('url "ws://127.0.0.1:99999" is not a valid URL')])
      const http = await run(['--policy', 'http://127.0.0.1:8000'])
      expect([http.code, http.stderr]).toEqual([2, expect.stringContaining("a policy server's address starts with ws:// or wss://")])
      const twice = await run(['--policy', 'ws://127.0.0.1:9', '--obs-map', '/joint_states/position=x,/camera/depth=x'])
      expect([twice.code, twice.stderr]).toEqual([2, expect.stringContaining('"/joint_states/position" and "/camera/depth" are both mapped to "x"')])
      // Onto a key the observation keeps: every episode fails saying so, nothing is sent silently overwritten.
      const url = await startServer()
      const onto = await run(['--policy', url, '--obs-map', '/camera/depth=/joint_states/position'])
      expect(onto.stderr).toContain('the key map gives "/joint_states/position" and "/camera/depth" the same name "/joint_states/position"')
      // A mistyped FROM renames nothing: one warning names it and what the recording has.
      const typo = await run(['--policy', url, '--obs-map', '/joint_state/position=observation/state'])
      expect(typo.stderr).toContain('warning: --obs-map names "/joint_state/position", which the recorded observation lacks (it has: ')
    }, TIMEOUT)
  },
)

describe('--concurrency', () => {
  it('replays several episodes at once with results identical to a sequential run, progress in [i/n] order', async () => {
    const args = ['--policy', './policies.mjs:slow', '--candidate-version', 'c', '--baseline-episodes', nine.slice(0, 6).join(','), '--dry-run']
    const sequential = await cli(args)
    const concurrent = await cli([...args, '--concurrency', '4', '--prefetch-mb', '1'])
    expect(sequential.code).toBe(0)
    expect(concurrent.stdout).toBe(sequential.stdout)
    expect(concurrent.stdout).toMatch(/\[1\/6\][^]*\[2\/6\][^]*\[6\/6\]/)
  }, TIMEOUT)

  it('runAgainst({ concurrency }) gives the sequential results, in baseline order, whatever order episodes finish in', async () => {
    const policy = async (obs: Record<string, { data: Float64Array }>, { step, episodeIndex }: { step: number; episodeIndex: number }) => {
      await new Promise((r) => setTimeout(r, ((episodeIndex * 3 + step) % 4) * 3))
      return { '/joint_states/position': obs['/joint_states/position']!.data.map((x) => x + episodeIndex * 0.01 + step * 1e-4) }
    }
    const ids = nine
    const results = []
    for (const concurrency of [1, 5]) {
      const run = await createRun({ candidatePolicyVersion: 'c', baselineEpisodeIds: ids, client, dryRun: true })
      const order: number[] = []
      results.push(await runAgainst(run, policy as never, { concurrency, onEpisode: (r) => void order.push(r.index), stderr: () => {} }))
      expect(order).toEqual(ids.map((_, i) => i + 1))
    }
    expect(results[1]).toEqual(results[0])
    expect(new Set(results[0]!.map((r) => r.metrics!.action_l2_mean)).size).toBe(ids.length)
  }, TIMEOUT)
})
