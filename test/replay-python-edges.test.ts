/**
 * Python policies at their edges: `_outcome` values JSON cannot spell (NaN,
 * infinities), sensors recorded big-endian, a CLI stopped by a signal while
 * the policy is inside a step, and a Python process killed by a signal. Each
 * case runs both ways a Python policy is driven: a whole episode per frame
 * (`actEpisode`) and one step per frame (`episodeFrameBytes: 1`).
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { replayEpisode } from '../src/replay/episode.ts'
import { createRun } from '../src/replay/eval-run.ts'
import { createZlibInflate } from '../src/replay/npz/index.ts'
import type { Action, Observation } from '../src/replay/policy.ts'
import { pythonPolicy } from '../src/replay/python/policy.ts'
import { runAgainst } from '../src/replay/run.ts'
import { inflateRawSync } from 'node:zlib'
import { recordBaseline } from './helpers/baselines.ts'
import { builtCli } from './helpers/cli.ts'
import { BRIDGE_PYTHON, describeWithPython } from './helpers/policy-python.ts'
import { runPython } from './helpers/python.ts'
import { startService, type TestService } from './helpers/service.ts'

const TIMEOUT = 120_000

const POLICIES = `
import ctypes, json, os, time
import numpy as np

def _position(obs):
    return {"/joint_states/position": obs["/joint_states/position"] + 0.0}

def nan_reward(obs, context):
    action = _position(obs)
    if context["step"] == context["steps"] - 1:
        action["_outcome"] = {"reward_total": float("nan"), "success": True}
    return action

def inf_time(obs, context):
    action = _position(obs)
    if context["step"] == context["steps"] - 1:
        action["_outcome"] = {"time_to_goal_s": np.float32(np.inf)}
    return action

def dtypes(obs):
    """Writes what it got (dtype, shape, values) at step 1 to seen.json."""
    if int(obs["step"]) == 1:
        with open("seen.json", "w") as f:
            json.dump({k: [v.dtype.str, list(v.shape), v.tolist()] for k, v in sorted(obs.items())}, f)
    return {"a": np.zeros(2)}

def hangs(obs, context):
    """Stuck in episode 0, step 2 (a deadlocked model); its pid goes to hangs.pid first."""
    if context["episodeIndex"] == 0 and context["step"] == 2:
        with open("hangs.pid", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(600)
    return _position(obs)

def segfaults(obs, context):
    if context["episodeIndex"] == 1 and context["step"] == 2:
        ctypes.string_at(0)
    return _position(obs)

def interrupted(obs, context):
    if context["episodeIndex"] == 1 and context["step"] == 2:
        raise KeyboardInterrupt
    return _position(obs)
`

/** The JavaScript twins of the _outcome policies. */
const jsTwins = {
  nan_reward: (obs: Observation, { step, steps }: { step: number; steps: number }): Action => ({
    '/joint_states/position': obs['/joint_states/position']!,
    ...(step === steps - 1 ? { _outcome: { reward_total: NaN, success: true } } : {}),
  }),
  inf_time: (obs: Observation, { step, steps }: { step: number; steps: number }): Action => ({
    '/joint_states/position': obs['/joint_states/position']!,
    ...(step === steps - 1 ? { _outcome: { time_to_goal_s: Infinity } } : {}),
  }),
}

let svc: TestService
let key: string
let client: EpisodicClient
let baselines: string[]
let dir: string

beforeAll(async () => {
  svc = await startService('pglite')
  key = (await svc.newTenant('python-edges')).key
  client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
  baselines = []
  for (let i = 0; i < 3; i++) baselines.push(await recordBaseline(client))
  dir = mkdtempSync(join(tmpdir(), 'episodic-python-edges-'))
  writeFileSync(join(dir, 'edges.py'), POLICIES)
}, TIMEOUT)
afterAll(async () => {
  await svc?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** Whole episodes per frame, and one step per frame. */
const PATHS = [['a whole episode per frame', undefined], ['one step per frame', 1]] as const

/** The result rows (as stored) of a dry run of `policy` over the baselines. */
async function errors(policy: Parameters<typeof runAgainst>[1]): Promise<(string | null)[]> {
  const run = await createRun({ candidatePolicyVersion: 'edges', baselineEpisodeIds: baselines, client, dryRun: true })
  return (await runAgainst(run, policy, { stderr: () => {} })).map((r) => r.error)
}

/** Whether process `pid` is still alive. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits up to `ms` for `check` to hold. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (check()) return true
  return check()
}

describeWithPython('Python policies at their edges', BRIDGE_PYTHON, ['numpy'], () => {
  it.each(PATHS)('a NaN or an infinity in _outcome is rejected as from a JavaScript policy, without a stack (%s)', async (_, episodeFrameBytes) => {
    for (const fn of ['nan_reward', 'inf_time'] as const) {
      const policy = pythonPolicy({ module: `edges.py:${fn}`, python: BRIDGE_PYTHON, cwd: dir, episodeFrameBytes })
      try {
        const python = await errors(policy)
        expect(python).toEqual(await errors(jsTwins[fn]))
        expect(python[0]).toBe(
          fn === 'nan_reward' ? 'TypeError: _outcome.reward_total: must be a finite number' : 'TypeError: _outcome.time_to_goal_s: must be a number >= 0',
        )
      } finally {
        await policy.close()
      }
    }
  }, TIMEOUT)

  it.each(PATHS)('arrays recorded big-endian reach the policy with the dtype np.load gives (%s)', async (_, episodeFrameBytes) => {
    const [actions, sensors] = ['actions', 'sensors'].map((name) => join(dir, `${name}.npz`))
    runPython(
      `import sys, numpy as np
n = 3
np.savez(sys.argv[1], a=np.zeros((n, 2)))
np.savez(sys.argv[2], step=np.arange(n).astype(">i4"), f8=(np.arange(n * 2).reshape(n, 2) / 3).astype(">f8"),
         u2=(np.arange(n * 2).reshape(n, 2) * 300).astype(">u2"), f2=(np.arange(n) / 4).astype(">f2"),
         fortran=np.asfortranarray(np.arange(n * 6).reshape(n, 2, 3).astype(">f4")), little=np.arange(n, dtype="<f8"), bytes=np.arange(n, dtype="u1"))`,
      [actions, sensors],
    )
    const expected = JSON.parse(runPython(
      `import sys, json, numpy as np
z = np.load(sys.argv[1])
print(json.dumps({k: [z[k][1, ...].dtype.str, list(z[k][1, ...].shape), z[k][1, ...].tolist()] for k in sorted(z.files)}))`,
      [sensors],
    ))
    expect([expected.f8[0], expected.step[0], expected.u2[0], expected.f2[0], expected.fortran[0]]).toEqual(['>f8', '>i4', '>u2', '>f2', '>f4'])
    expect(runPython('import sys, numpy as np; print(np.load(sys.argv[1])["fortran"].flags.f_contiguous)', [sensors]).trim()).toBe('True')
    const policy = pythonPolicy({ module: 'edges.py:dtypes', python: BRIDGE_PYTHON, cwd: dir, episodeFrameBytes })
    try {
      rmSync(join(dir, 'seen.json'), { force: true })
      const input = { actions: readFileSync(actions), sensors: readFileSync(sensors), metadata: {}, inflate: createZlibInflate(inflateRawSync) }
      await replayEpisode(policy, input)
      expect(JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8'))).toEqual(expected)
      // A JavaScript policy still gets native typed arrays, values as recorded.
      await replayEpisode((obs) => {
        expect(obs.f8!.data).toBeInstanceOf(Float64Array)
        expect(obs.u2!.data).toBeInstanceOf(Uint16Array)
        return { a: new Float64Array(2) }
      }, { ...input, actions: readFileSync(actions), sensors: readFileSync(sensors) })
    } finally {
      await policy.close()
    }
  }, TIMEOUT)

  it('close() stops a process stuck inside a step at once, rather than when the step returns', async () => {
    const pidFile = join(dir, 'hangs.pid')
    rmSync(pidFile, { force: true })
    const policy = pythonPolicy({ module: 'edges.py:hangs', python: BRIDGE_PYTHON, cwd: dir })
    const run = await createRun({ candidatePolicyVersion: 'hangs', baselineEpisodeIds: baselines, client, dryRun: true })
    void runAgainst(run, policy, { stderr: () => {} }).catch(() => {})
    expect(await until(() => existsSync(pidFile), 30_000)).toBe(true)
    const pid = Number(readFileSync(pidFile, 'utf8'))
    try {
      const started = Date.now()
      await policy.close()
      expect(alive(pid)).toBe(false)
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL')
    }
  }, TIMEOUT)

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'a %s to the CLI process alone (not its group) stops the Python process stuck in a step, then the CLI exits',
    async (signal) => {
      const pidFile = join(dir, 'hangs.pid')
      rmSync(pidFile, { force: true })
      const [command, prefix] = await builtCli()
      const args = [
        'replay',
        'run',
        '--policy',
        'edges.py:hangs',
        '--python',
        BRIDGE_PYTHON,
        '--candidate-version',
        'hangs',
        '--baseline-episodes',
        baselines.join(','),
      ]
      const cli = spawn(command, [...prefix, ...args], {
        cwd: dir,
        env: {
          PATH: process.env.PATH!,
          HOME: dir,
          EPISODIC_CREDENTIALS_FILE: join(dir, 'none'),
          EPISODIC_API_KEY: key,
          EPISODIC_BASE_URL: svc.url,
          NO_COLOR: '1',
        },
      })
      let stderr = ''
      cli.stderr.on('data', (d) => (stderr += d))
      cli.stdout.resume()
      const exited = new Promise<[number | null, string | null]>((resolve) => cli.once('exit', (code, sig) => resolve([code, sig])))
      expect(await until(() => existsSync(pidFile), 60_000), stderr).toBe(true)
      const pid = Number(readFileSync(pidFile, 'utf8'))
      try {
        cli.kill(signal)
        expect(await exited).toEqual([{ SIGTERM: 143, SIGINT: 130, SIGHUP: 129 }[signal], null])
        expect(stderr).toMatch(/episodic: interrupted; eval run \S+ stays pending with 0 of 3 results/)
        expect(await until(() => !alive(pid), 5_000)).toBe(true)
      } finally {
        if (alive(pid)) process.kill(pid, 'SIGKILL')
        cli.kill('SIGKILL')
      }
    },
    TIMEOUT,
  )

  it.each(PATHS)('a process killed by a signal fails its episode naming the signal and where it was (%s)', async (_, episodeFrameBytes) => {
    const policy = pythonPolicy({ module: 'edges.py:segfaults', python: BRIDGE_PYTHON, cwd: dir, episodeFrameBytes })
    try {
      const [first, crashed, third] = await errors(policy)
      expect([first, third]).toEqual([null, null])
      expect(crashed).toBe(
        `Error: the Python policy process was killed by SIGSEGV (a crash in native code?) at episode 2${
          episodeFrameBytes ? ', step 2' : ''
        }; its standard error went to the replay's standard error`,
      )
    } finally {
      await policy.close()
    }
  }, TIMEOUT)

  it.each(PATHS)('a KeyboardInterrupt raised in the policy fails its episode like any exception, naming the step (%s)', async (_, episodeFrameBytes) => {
    const policy = pythonPolicy({ module: 'edges.py:interrupted', python: BRIDGE_PYTHON, cwd: dir, episodeFrameBytes })
    try {
      const [first, interrupted, third] = await errors(policy)
      expect([first, third]).toEqual([null, null])
      expect(interrupted).toMatch(/^KeyboardInterrupt \(step 2\)\nTraceback \(most recent call last\):\n[^]*edges\.py", line \d+, in interrupted/)
    } finally {
      await policy.close()
    }
  }, TIMEOUT)
})
