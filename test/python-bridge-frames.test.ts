/**
 * The whole-episode frames (`actEpisode`: one `P` frame out, one `B` frame
 * back) against the step frames (`act`): for every kind of answer a policy
 * gives, stacked or not, the per-step actions must be the same.
 */
import * as childProcess from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { BRIDGE_PYTHON, describeWithPython } from './helpers/policy-python.ts'
import { type NdArray, stepView } from '../src/replay/npz/index.ts'
import type { Action, EpisodeContext, Observation } from '../src/replay/policy.ts'
import { ConfigurationError } from '../src/client/errors.ts'
import { bridgeArgs, pythonPolicy, PythonPolicyError } from '../src/replay/python/policy.ts'
import { type ChildProcessModule, childProcessSpawner, type SpawnBridge } from '../src/replay/python/process.ts'
import { ROOT } from './helpers/build.ts'

const POLICIES = `
import numpy as np

def stacked(obs):
    out = {"a": obs["x"] * 2, "g": 1.5, "n": int(obs["s"]) % 3}
    if int(obs["s"]) == 4:
        out["_outcome"] = {"success": True, "reward_total": float(obs["s"])}
    return out

def ragged(obs):
    return {"a": obs["x"][: 1 + int(obs["s"]) % 2]}

def exits(obs):
    import sys
    if int(obs["s"]) == 3:
        sys.exit(3)
    return {"a": obs["x"]}

def extra_key(obs):
    return {"a": obs["x"], "b": obs["s"]} if int(obs["s"]) == 1 else {"a": obs["x"]}

def zero_d(obs):
    assert isinstance(obs["s"], np.ndarray) and obs["s"].ndim == 0, type(obs["s"])
    assert obs["k"].shape == () and obs["img"].shape == (2, 3)
    return {"a": obs["s"] + obs["k"], "img": obs["img"].astype(np.float32).sum(axis=0)}

def with_context(obs, context):
    return {"a": np.array([context["step"], context["steps"], context["episodeIndex"]], dtype=np.int32), "id": len(context["baselineEpisodeId"])}

def with_metadata(obs, context):
    meta = context["metadata"]
    return {"a": len(meta["task"]), "big_ok": int(meta["big"] == 2**60 + 1)}

class optional_reset:
    """reset's context parameter is optional: the bridge still passes the context."""
    seen = []
    @staticmethod
    def reset(context=None):
        optional_reset.seen.append(context)
    @staticmethod
    def act(obs):
        context = optional_reset.seen[-1]
        return {"a": -1 if context is None else context["episodeIndex"] + 100}

class FakeTensor:
    """Duck-types a torch.Tensor on a GPU that requires grad: numpy() only after detach().cpu()."""
    def __init__(self, array, dtype="torch.float64", where="cuda"):
        self.array, self.dtype, self.where = array, dtype, where
    def detach(self):
        return FakeTensor(self.array, self.dtype, self.where + "+detached")
    def cpu(self):
        return FakeTensor(self.array, self.dtype, "cpu" if self.where.endswith("+detached") else self.where)
    def float(self):
        return FakeTensor(self.array.astype(np.float32), "torch.float32", self.where)
    def numpy(self):
        if self.where != "cpu":
            raise TypeError("can't convert a cuda tensor that requires grad to numpy")
        if self.dtype == "torch.bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self.array
    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert a cuda tensor that requires grad to numpy")

def torch_like(obs):
    s = float(obs["s"])
    return {"a": FakeTensor(np.array([s, s + 1])), "b": FakeTensor(np.array([0.5 * s]), dtype="torch.bfloat16")}

def nonfinite(obs):
    return {"a": float("nan") if int(obs["s"]) == 1 else 1.5}

def raises(obs):
    if int(obs["s"]) == 3:
        raise ValueError("boom at %d" % int(obs["s"]))
    return {"a": obs["x"]}

def not_a_dict(obs):
    return [1] if int(obs["s"]) == 2 else {"a": obs["x"]}
`

const STEPS = 5
const context: EpisodeContext = { episodeIndex: 2, baselineEpisodeId: 'base-1', steps: STEPS }
const observations: Observation = {
  x: { dtype: 'float64', shape: [STEPS + 2, 3], data: Float64Array.from({ length: (STEPS + 2) * 3 }, (_, i) => i / 4), order: 'C' },
  s: { dtype: 'int64', shape: [STEPS + 2], data: BigInt64Array.from({ length: STEPS + 2 }, (_, i) => BigInt(i)), order: 'C' },
  k: { dtype: 'float32', shape: [], data: Float32Array.of(0.5), order: 'C' },
  img: { dtype: 'uint8', shape: [STEPS + 2, 2, 3], data: Uint8Array.from({ length: (STEPS + 2) * 6 }, (_, i) => i), order: 'C' },
}

/** Comparable plain values: arrays as dtype, shape and elements. */
function plain(actions: Action[]): unknown {
  return actions.map((action) =>
    Object.fromEntries(
      Object.entries(action).map(([key, value]) => {
        const array = value as NdArray
        return [
          key,
          array && typeof array === 'object' && 'dtype' in array
            ? { dtype: array.dtype, shape: array.shape, data: Array.from(array.data as ArrayLike<unknown>) }
            : value,
        ]
      }),
    )
  )
}

describeWithPython('pythonPolicy: a whole episode per frame', BRIDGE_PYTHON, ['numpy'], () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'episodic-bridge-'))
    writeFileSync(join(dir, 'policies.py'), POLICIES)
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  /** The same episode through `actEpisode` (as runAgainst sends it), step by step through `act`, and in frames too small for it. */
  async function both(fn: string): Promise<{ episode: unknown; steps: unknown; split: unknown }> {
    const run = async (episodeFrameBytes?: number, perStep = false) => {
      const policy = pythonPolicy({ module: `policies.py:${fn}`, python: BRIDGE_PYTHON, cwd: dir, episodeFrameBytes })
      try {
        await policy.reset(context)
        if (!perStep) return plain(await policy.actEpisode(observations, context))
        const actions: Action[] = []
        for (let step = 0; step < STEPS; step++) {
          const observation: Observation = {}
          for (const [name, array] of Object.entries(observations)) observation[name] = array.shape.length === 0 ? array : stepView(array, step)
          actions.push(await policy.act(observation, { ...context, step }))
        }
        return plain(actions)
      } finally {
        await policy.close()
      }
    }
    return { episode: await run(), steps: await run(undefined, true), split: await run(1) }
  }

  it.each(['stacked', 'ragged', 'extra_key', 'zero_d', 'with_context', 'nonfinite'])('%s: every step answers as it does one step at a time', async (fn) => {
    const { episode, steps, split } = await both(fn)
    expect(episode).toEqual(steps)
    expect(split).toEqual(steps)
    expect(episode).toHaveLength(STEPS)
  }, 60_000)

  it('stacks what agrees across steps and sends _outcome only where a step returned it', async () => {
    const { episode } = await both('stacked')
    const actions = episode as Record<string, unknown>[]
    expect(actions[0]).toEqual({ a: { dtype: 'float64', shape: [3], data: [0, 0.5, 1] }, g: 1.5, n: 0 })
    expect(actions[4]!._outcome).toEqual({ success: true, reward_total: 4 })
    expect(actions.slice(0, 4).every((a) => !('_outcome' in a))).toBe(true)
    // Stacked: step 1's array directly follows step 0's in one .npy; per step, each has its own.
    const gap = async (fn: string) => {
      const policy = pythonPolicy({ module: `policies.py:${fn}`, python: BRIDGE_PYTHON, cwd: dir })
      try {
        await policy.reset(context)
        const [first, second] = (await policy.actEpisode(observations, context)).map((a) => (a.a as NdArray).data)
        return second!.byteOffset - first!.byteOffset
      } finally {
        await policy.close()
      }
    }
    expect(await gap('stacked')).toBe(3 * 8)
    expect(await gap('extra_key')).toBeGreaterThanOrEqual(64)
  }, 60_000)

  it('a Python float NaN arrives as a 0-d float64 array (JSON cannot carry it), the other steps as numbers', async () => {
    const { episode } = await both('nonfinite')
    const actions = episode as Record<string, unknown>[]
    expect(actions[0]!.a).toBe(1.5)
    expect(actions[1]!.a).toEqual({ dtype: 'float64', shape: [], data: [NaN] })
  }, 60_000)

  it('PyTorch tensors (on a GPU, with grad, bfloat16) come back as numpy arrays', async () => {
    const { episode } = await both('torch_like')
    const actions = episode as Record<string, unknown>[]
    expect(actions[3]).toEqual({ a: { dtype: 'float64', shape: [2], data: [3, 4] }, b: { dtype: 'float32', shape: [1], data: [1.5] } })
  }, 60_000)

  it('runs the bridge from its source (python -c) when the package was loaded over https, as JSR on Deno does', async () => {
    const source = readFileSync(join(ROOT, 'src/replay/python/episodic_bridge.py'), 'utf8')
    const asked: string[] = []
    const served = (url: string | URL | Request) => (asked.push(String(url)), Promise.resolve(new Response(source)))
    const args = await bridgeArgs(undefined, 'https://jsr.io/@episodic/episodic/0.2.0/src/replay/python/policy.ts', served as typeof fetch)
    expect(asked).toEqual(['https://jsr.io/@episodic/episodic/0.2.0/src/replay/python/episodic_bridge.py'])
    expect(args).toEqual(['-c', source])
    // The same policy through that source: the default spawner, given the -c arguments.
    const spawn: SpawnBridge = (command, _args, options) =>
      childProcessSpawner(childProcess as unknown as ChildProcessModule)(command, ['-u', ...args], options)
    const policy = pythonPolicy({ module: 'policies.py:with_context', python: BRIDGE_PYTHON, cwd: dir, spawn })
    try {
      await policy.reset(context)
      const actions = await policy.actEpisode(observations, context)
      expect((plain(actions) as unknown[])[3]).toEqual({ a: { dtype: 'int32', shape: [3], data: [3, STEPS, 2] }, id: 6 })
    } finally {
      await policy.close()
    }
    const missing = () => Promise.resolve(new Response('not found', { status: 404 }))
    await expect(bridgeArgs(undefined, 'https://jsr.io/x/policy.ts', missing as typeof fetch)).rejects.toThrow(
      'pythonPolicy: cannot fetch the bridge from https://jsr.io/x/episodic_bridge.py (404); pass options.bridgePath',
    )
  })

  it("reset and every step's context carry the baseline's metadata, integers past 2^53 exact", async () => {
    const policy = pythonPolicy({ module: 'policies.py:with_metadata', python: BRIDGE_PYTHON, cwd: dir })
    try {
      const withMetadata = { ...context, metadata: { task: 'pick', big: 2n ** 60n + 1n } }
      await policy.reset(withMetadata)
      const actions = await policy.actEpisode(observations, withMetadata)
      expect(actions).toHaveLength(STEPS)
      for (const action of actions) expect(action).toEqual({ a: 4, big_ok: 1 })
    } finally {
      await policy.close()
    }
  }, 60_000)

  it('reset(context=None) gets the context, as a JavaScript reset does', async () => {
    const policy = pythonPolicy({ module: 'policies.py:optional_reset.act', python: BRIDGE_PYTHON, cwd: dir })
    try {
      await policy.reset(context)
      const actions = await policy.actEpisode(observations, context)
      for (const action of actions) expect(action).toEqual({ a: context.episodeIndex + 100 })
    } finally {
      await policy.close()
    }
  }, 60_000)

  it('sys.exit() in a policy fails that episode with the step and traceback; the process goes on', async () => {
    for (const episodeFrameBytes of [undefined, 1]) {
      const policy = pythonPolicy({ module: 'policies.py:exits', python: BRIDGE_PYTHON, cwd: dir, episodeFrameBytes })
      try {
        await policy.reset(context)
        const error = await policy.actEpisode(observations, context).catch((e) => e)
        expect(error).toBeInstanceOf(PythonPolicyError)
        expect(error.message).toBe('SystemExit: 3 (step 3)')
        expect(error.stack).toMatch(/policies\.py", line \d+, in exits/)
        await policy.reset(context) // still alive
      } finally {
        await policy.close()
      }
    }
  }, 60_000)

  it('an interpreter that exits before loading the policy (not Python, no numpy) is a ConfigurationError', async () => {
    for (const python of ['true', 'false']) {
      const policy = pythonPolicy({ module: 'policies.py:stacked', python, cwd: dir })
      try {
        const error = await policy.open!().catch((e) => e)
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error.message).toContain(`cannot load Python policy policies.py:stacked: ${python} exited before loading it`)
      } finally {
        await policy.close()
      }
    }
  }, 60_000)

  it('a step that raises fails the episode naming that step, with the traceback', async () => {
    const policy = pythonPolicy({ module: 'policies.py:raises', python: BRIDGE_PYTHON, cwd: dir })
    try {
      await policy.reset(context)
      const error = await policy.actEpisode(observations, context).catch((e) => e)
      expect(error).toBeInstanceOf(PythonPolicyError)
      expect(error.message).toBe('ValueError: boom at 3 (step 3)')
      expect(error.stack).toContain('Traceback (most recent call last):')
      expect(error.stack).toMatch(/policies\.py", line \d+, in raises/)
      // The process goes on: the next episode answers.
      const wrong = await pythonPolicy({ module: 'policies.py:not_a_dict', python: BRIDGE_PYTHON, cwd: dir })
      try {
        await wrong.reset(context)
        await expect(wrong.actEpisode(observations, context)).rejects.toThrow(
          'TypeError: policy returned list; expected a dict keyed by namespace (step 2)',
        )
      } finally {
        await wrong.close()
      }
      const again = await policy.actEpisode({ ...observations, s: { ...observations.s!, data: new BigInt64Array(STEPS + 2) } }, context)
      expect(again).toHaveLength(STEPS)
    } finally {
      await policy.close()
    }
  }, 60_000)
})
