/**
 * `pythonPolicy`: a Python callable as a replay policy. One Python child
 * process runs `episodic_bridge.py` (shipped beside this code, stdlib and
 * numpy only) and imports the callable. `runAgainst` sends it each episode
 * whole in one binary frame and gets every step's action back in one (replay
 * is open loop); `act` sends one step. See `frames.ts` and the bridge's own
 * doc for the layout.
 */
import { runtimeEnvironment } from '../../client/environment.ts'
import { ConfigurationError } from '../../client/errors.ts'
import { stepView } from '../npz/index.ts'
import { Bystander, retried, withoutStack } from '../errors.ts'
import { type Action, callSite, type EpisodeContext, type Observation, type PolicyObject, type StepContext } from '../policy.ts'
import { bodyText, decodeAction, decodeBatch, jsonFrame, KIND, StepEncoder } from './frames.ts'
import { type BridgeProcess, childProcessSpawner, type SpawnBridge } from './process.ts'

/**
 * How `pythonPolicy` finds and runs the Python callable.
 *
 * @example
 * const policy = pythonPolicy({ module: 'policies/candidate.py:act', python: '.venv/bin/python', cwd: repoRoot })
 */
export interface PythonPolicyOptions {
  /** `package.module:attr` (attr may be dotted) or `path/to/file.py:attr`, resolved from `cwd`. */
  module: string
  /** The interpreter (default `python3` on PATH); it needs Python >= 3.9 and numpy. */
  python?: string
  /** Working directory of the Python process, put first on `sys.path` (default: this process's). */
  cwd?: string
  /** Starts the process (default: the runtime's `child_process`; Node, Deno and Bun have one). */
  spawn?: SpawnBridge
  /** Path of `episodic_bridge.py` (default: the copy shipped beside this module). */
  bridgePath?: string
  /** Steps sent ahead of the answers (default 16; see `PolicyObject.pipelineDepth`). */
  pipelineDepth?: number
  /**
   * Largest episode (bytes of its arrays) sent to the bridge in one frame
   * (default 1 GiB; at most 4 GiB, the frame's length field); a larger one
   * goes step by step, pipelined, so neither process holds it twice.
   */
  episodeFrameBytes?: number
  /**
   * The longest the callable (or its `reset`) may take over one step, in
   * milliseconds; a whole-episode frame gets this times its steps. Past it
   * the episode fails (`did not answer within ...`), the process is stopped
   * and the next episode starts a new one. Default: no limit. Loading the
   * module is not timed (a model may take minutes to load).
   */
  timeoutMs?: number
}

/** What the bridge found when it imported the policy. */
export interface PythonPolicyInfo {
  /** A `reset` beside the callable. */
  reset: boolean
  /** The callable takes a second argument (the step context). */
  context: boolean
  /** The interpreter's version, for example `3.12.3`. */
  python: string
  /** numpy's version, for example `2.1.0`. */
  numpy: string
}

/**
 * A Python exception raised by the policy (or its `reset`): `stack` is
 * `Type: message`, then the Python traceback, which is what the failed
 * result row's `error` carries.
 */
export class PythonPolicyError extends Error {
  /** Always `'PythonPolicyError'`, so the error can be matched by name across bundles. */
  override name = 'PythonPolicyError'
  /** Builds the error from the bridge's `Type: message` + traceback `text`; `where` names the step or `reset`. */
  constructor(text: string, where: string) {
    const [first = 'Python error', ...rest] = text.trimEnd().split('\n')
    super(`${first} (${where})`)
    this.stack = [`${first} (${where})`, ...rest].join('\n')
  }
}

/** The Python policy took longer than `timeoutMs` to answer; its process was stopped. */
export class PythonPolicyTimeout extends Error {
  /** Always `'PythonPolicyTimeout'`, so the error can be matched by name across bundles. */
  override readonly name = 'PythonPolicyTimeout'
  /** Builds the error; `message` names the limit and the step or episode. */
  constructor(message: string) {
    super(message)
    withoutStack(this)
  }
}

/** The policy object `pythonPolicy` returns: a `PolicyObject` whose hooks all run in the Python process. */
export interface PythonPolicy extends PolicyObject {
  /** Runs the Python `reset()` (if any), restarting the process first if it died. */
  reset(context: EpisodeContext): Promise<void>
  /** Sends one step's arrays to the callable and resolves with its actions. */
  act(observation: Observation, context: StepContext): Promise<Action>
  /**
   * Sends a whole episode's arrays in one frame; the bridge calls the
   * callable for each step in order, as `act` would, and answers every
   * action in one frame. An episode over `episodeFrameBytes` goes step by
   * step instead.
   */
  actEpisode(observations: Observation, context: EpisodeContext): Promise<Action[]>
  /** Steps sent ahead of the answers. */
  pipelineDepth: number
  /** Starts the process and imports the policy; rejects with the import error. */
  open(): Promise<void>
  /**
   * Ends the process: closes its input, so it ends once idle; if a call is in
   * progress (the run was interrupted or failed around it) stops it at once
   * (SIGTERM, then SIGKILL after a short grace). Safe to call twice.
   */
  close(): Promise<void>
  /** Set once `open` has resolved. */
  info: PythonPolicyInfo | null
}

interface Pending {
  resolve(body: Uint8Array): void
  reject(error: Error): void
  /** The step, episode or `reset` asked about, for a timeout's message. */
  where: string
  /** Where the policy was, for the message when the process dies on it (`at episode 3, step 5`: episodes from 1, steps from 0). */
  at: string
  /** How long its answer may take once it is the oldest request (Infinity: untimed). */
  budgetMs: number
}

/**
 * A policy object for `runAgainst` that runs a Python callable. The process
 * starts on `open` (`runAgainst` calls it; an import error stops the run
 * there) and ends on `close`; if it dies mid-run (a crash in native code),
 * the episode in progress fails and the next `reset` starts a new one;
 * episodes that waited behind it (`concurrency` above 1) run again there.
 *
 * Arrays reach the callable as numpy arrays of the recorded dtype and shape;
 * it returns a dict of numpy arrays or numbers (plus `_outcome` if it likes),
 * and a `reset()` beside it runs before each episode. The callable receives
 * a second argument, a dict `{step, steps, episodeIndex, baselineEpisodeId}`,
 * when its signature accepts one.
 *
 * @example
 * const policy = pythonPolicy({ module: 'lab.policies:act' })
 * try {
 *   await runAgainst(run, policy)
 * } finally {
 *   await policy.close()
 * }
 */
export function pythonPolicy(options: PythonPolicyOptions): PythonPolicy {
  if (!options || typeof options.module !== 'string' || !/.:[^:]+$/.test(options.module)) {
    throw new ConfigurationError(`pythonPolicy: module must be "package.module:attr" or "file.py:attr" (got ${JSON.stringify(options?.module)})`)
  }
  const python = options.python ?? 'python3'
  let spawn = options.spawn
  const encoder = new StepEncoder()
  const episodeFrameBytes = options.episodeFrameBytes ?? 2 ** 30
  let child: BridgeProcess | null = null
  let starting: Promise<void> | null = null
  let pending: Pending[] = []
  let dead: Error | null = null
  const timeoutMs = options.timeoutMs ?? Infinity
  if (!(timeoutMs > 0)) throw new ConfigurationError(`pythonPolicy: timeoutMs must be a positive number (got ${options.timeoutMs})`)
  // Times the oldest request only: the ones behind it wait for the bridge, not for the policy.
  let timer: ReturnType<typeof setTimeout> | undefined
  const watch = () => {
    clearTimeout(timer)
    timer = undefined
    const head = pending[0]
    if (head && head.budgetMs < Infinity) timer = setTimeout(() => stop(head), Math.min(head.budgetMs, 2 ** 31 - 1))
  }
  /** The oldest request got no answer in time: fail what waits, stop the process; the next episode starts another. */
  const stop = (head: Pending) => {
    const seconds = +(head.budgetMs / 1000).toPrecision(3)
    dead = new PythonPolicyTimeout(`the Python policy did not answer within ${seconds} s (${head.where}); its process was stopped`)
    const stuck = child
    child = null
    failPending(dead)
    stuck?.kill()
  }
  /**
   * The process is gone: the oldest request (the frame it was working on: the
   * bridge answers in order) fails with `error`; the ones queued behind it
   * were not run, so they may be sent again to a new process (`Bystander`).
   */
  const failPending = (error: Error) => {
    const [head, ...behind] = pending
    pending = []
    watch()
    head?.reject(error)
    for (const waiter of behind) waiter.reject(error instanceof ConfigurationError ? error : new Bystander(error))
  }

  const request = (frame: Uint8Array | Uint8Array[], where: string, budgetMs = Infinity, at = `at ${where}`): Promise<Uint8Array> => {
    if (!child || dead) return Promise.reject(dead ?? new Error('python policy is not open'))
    if (pending.length === 0) child.hold(true)
    // The chunks of one frame go out corked, in one writev (see process.ts).
    for (const chunk of Array.isArray(frame) ? frame : [frame]) child.write(chunk)
    return new Promise((resolve, reject) => {
      pending.push({ resolve, reject, where, budgetMs, at })
      if (pending.length === 1) watch()
    })
  }
  const answer = (body: Uint8Array) => {
    const waiter = pending.shift()
    if (pending.length === 0) child?.hold(false)
    watch()
    waiter?.resolve(body)
  }
  let bridge: string[] | undefined
  const start = async (): Promise<void> => {
    // Awaited only on the first start: a restart (after a crash) must spawn in the same tick it
    // began, or requests retried meanwhile would see the dead process and start another one.
    bridge ??= await bridgeArgs(options.bridgePath)
    spawn ??= defaultSpawner()
    const process = spawn(python, ['-u', ...bridge], { cwd: options.cwd })
    child = process
    dead = null
    process.onData(frameReader(answer))
    process.onExit((code, error, signal) => {
      if (child !== process) return // stopped after a timeout: that already failed what was waiting
      dead = error
        ? new ConfigurationError(`cannot start ${python} (${error.message}); install Python >= 3.9 with numpy or pass its path (--python)`)
        : withoutStack(new Error(signal ? killedBy(signal, pending[0]?.at) : `the Python policy process exited (code ${code}); see its output above`))
      failPending(dead)
    })
    const body = await request(jsonFrame(KIND.load, { target: options.module, cwd: options.cwd }), 'load', Infinity, 'while loading the policy').catch(
      (error: unknown) => {
        // Exited before answering the load frame: not Python, no numpy, a broken interpreter.
        if (error instanceof ConfigurationError) throw error
        const why = (error as Error).message
        throw new ConfigurationError(
          `cannot load Python policy ${options.module}: ${python} exited before loading it (${why}); it needs Python >= 3.9 with numpy (--python picks another interpreter)`,
        )
      },
    )
    const text = bodyText(body)
    if (body[0] === KIND.error) throw new ConfigurationError(`cannot load Python policy ${options.module}:\n${text}`)
    policy.info = JSON.parse(text) as PythonPolicyInfo
  }
  const ensureOpen = (): Promise<void> => {
    if (!starting || (dead && !(dead instanceof ConfigurationError))) starting = start()
    return starting
  }
  const expect = async (frame: Uint8Array | Uint8Array[], where: string, steps = 1, at = `at ${where}`): Promise<Uint8Array> => {
    const body = await request(frame, where, timeoutMs * steps, at)
    if (body[0] === KIND.error) throw new PythonPolicyError(bodyText(body), where)
    return body
  }

  const policy: PythonPolicy = {
    info: null,
    pipelineDepth: options.pipelineDepth ?? 16,
    open: ensureOpen,
    async reset(context: EpisodeContext) {
      const once = async () => {
        await ensureOpen()
        const where = `reset before ${callSite(context)}`
        await expect(jsonFrame(KIND.reset, { ...context, metadata: context.metadata ?? {} }), where, 1, `in ${where}`)
      }
      await once().catch((error: unknown) => retried(error, once))
    },
    async act(observation: Observation, context: StepContext): Promise<Action> {
      // One step of an episode cannot run again alone (the policy's state is gone with the process).
      const at = `at ${callSite(context, context.step)}`
      const body = await expect(encoder.encode(context.episodeIndex, context.step, observation), `step ${context.step}`, 1, at).catch((error: unknown) => {
        throw error instanceof Bystander ? error.cause : error
      })
      return decodeAction(body)
    },
    async actEpisode(observations: Observation, context: EpisodeContext): Promise<Action[]> {
      let bytes = 0
      for (const array of Object.values(observations)) bytes += array.data.byteLength
      if (bytes > Math.min(episodeFrameBytes, 0xffff0000)) return await stepByStep(policy, observations, context)
      const once = () => expect(encoder.encodeEpisode(context.episodeIndex, context.steps, observations), callSite(context), context.steps)
      // Queued behind an episode that crashed the process (--concurrency): run again from its reset on a new one.
      const body = await once().catch((error: unknown) => retried(error, async () => (await policy.reset(context), await once())))
      if (body[0] === KIND.failed) {
        const step = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(1, true)
        throw new PythonPolicyError(bodyText(body.subarray(4)), `step ${step}`) // F, u32 step, then the text
      }
      return decodeBatch(body, context.steps)
    },
    async close() {
      const closing = child
      child = null
      starting = null
      clearTimeout(timer)
      if (!closing) return
      const exited = new Promise<void>((resolve) => closing.onExit(() => resolve()))
      closing.hold(true)
      closing.end()
      // A call in progress is not waited for: nothing wants its answer (a Ctrl-C, a run that failed
      // around it), and a model stuck in it would hold its memory until it returned. What waited on
      // it is dropped, not failed, so no episode is retried or reported for it.
      const busy = pending.length > 0
      pending = []
      if (!busy) return await exited
      closing.kill('SIGTERM')
      const force = setTimeout(() => closing.kill('SIGKILL'), KILL_GRACE_MS)
      await exited
      clearTimeout(force)
    },
  }
  return policy
}

/** How long a process stopped mid-call (`close`) has to end on SIGTERM before it gets SIGKILL. */
const KILL_GRACE_MS = 2000

/**
 * The error for a process killed by `signal` while the policy was `at` a
 * step: it is read later, in the portal, so it says where the details went.
 */
function killedBy(signal: string, at = 'between calls'): string {
  const why = /^SIG(?:SEGV|BUS|ILL|FPE|ABRT)$/.test(signal) ? ' (a crash in native code?)' : signal === 'SIGKILL' ? ' (out of memory?)' : ''
  return `the Python policy process was killed by ${signal}${why} ${at}; its standard error went to the replay's standard error`
}

/** An episode through `act`, `pipelineDepth` steps in flight, for episodes too large for one frame. */
async function stepByStep(policy: PythonPolicy, observations: Observation, context: EpisodeContext): Promise<Action[]> {
  const pending: Promise<Action>[] = []
  const actions: Action[] = []
  for (let step = 0; step < context.steps; step++) {
    const observation: Observation = {}
    for (const [name, array] of Object.entries(observations)) observation[name] = array.shape.length === 0 ? array : stepView(array, step)
    const action = policy.act(observation, { ...context, step })
    action.catch(() => {}) // an earlier step's failure is the one reported
    pending.push(action)
    if (pending.length >= policy.pipelineDepth) actions.push(await pending.shift()!)
  }
  for (const action of pending) actions.push(await action)
  return actions
}

/** Splits the byte stream into frame bodies (each a fresh buffer: decoded arrays view it). */
function frameReader(onFrame: (body: Uint8Array) => void): (chunk: Uint8Array) => void {
  let header = new Uint8Array(4)
  let headerFill = 0
  let body: Uint8Array | null = null
  let bodyFill = 0
  return (chunk) => {
    let at = 0
    while (at < chunk.length) {
      if (body === null) {
        const take = Math.min(4 - headerFill, chunk.length - at)
        header.set(chunk.subarray(at, at + take), headerFill)
        headerFill += take
        at += take
        if (headerFill < 4) return
        body = new Uint8Array(new DataView(header.buffer).getUint32(0, true))
        bodyFill = 0
        headerFill = 0
        header = new Uint8Array(4)
      }
      const take = Math.min(body.length - bodyFill, chunk.length - at)
      body.set(chunk.subarray(at, at + take), bodyFill)
      bodyFill += take
      at += take
      if (bodyFill === body.length) {
        const done = body
        body = null
        onFrame(done)
      }
    }
  }
}

function defaultSpawner(): SpawnBridge {
  const childProcess = runtimeEnvironment().childProcess
  if (!childProcess) throw new ConfigurationError('pythonPolicy: this runtime has no child_process; pass options.spawn')
  return childProcessSpawner(childProcess)
}

/** `episodic_bridge.py` beside this module: src/replay/python/ from source, dist/ in the package (tsup copies it). */
/**
 * How python runs the bridge: `bridgePath`, else the file beside this module,
 * else (this module was loaded over https: JSR on Deno) its source, fetched
 * from beside it and passed with `-c`.
 */
export async function bridgeArgs(bridgePath?: string, base: string = import.meta.url, fetcher: typeof fetch = fetch): Promise<string[]> {
  if (bridgePath !== undefined) return [bridgePath]
  const url = new URL('./episodic_bridge.py', base)
  if (url.protocol === 'file:') {
    const path = decodeURIComponent(url.pathname)
    return [/^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path]
  }
  const response = await fetcher(url).catch((error: unknown) => ({ ok: false, status: (error as Error).message }) as const)
  if (!response.ok) throw new ConfigurationError(`pythonPolicy: cannot fetch the bridge from ${url.href} (${response.status}); pass options.bridgePath`)
  return ['-c', await response.text()]
}
