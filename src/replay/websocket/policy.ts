/**
 * `websocketPolicy`: drives a running policy server that speaks openpi's
 * websocket protocol (`openpi_client.websocket_client_policy`): on connect
 * the server sends one msgpack message of metadata; then each `infer` is one
 * binary message out (the observation) and one back (the action), arrays in
 * openpi's `msgpack_numpy` form. A server-side exception comes back as a text
 * message holding its traceback, after which openpi's server closes the
 * connection; that episode fails and the next one reconnects.
 *
 * A connection that ends otherwise: a clean close (1000, 1001: an idle
 * timeout, a restart) answered nothing still waiting, so those steps go out
 * again on a new connection (openpi's `infer` holds no state); an abnormal
 * one (1006: the server died) fails the episode of the oldest step waiting,
 * as a crashed Python process does. A server that went away is reconnected
 * to for up to `reconnectMs`; past that the run stops with a
 * `TransportError` (the CLI's exit 5: the run stays pending and can be
 * resumed) rather than failing every episode left.
 *
 * Servers that answer with an action chunk (openpi's `actions` of shape
 * `[horizon, dim]`) are driven as openpi-client's `ActionChunkBroker` drives
 * them, with `actionHorizon` H: one `infer` at steps 0, H, 2H, ... of each
 * episode, and step s gets row `s mod H` of every array in the last answer.
 */
import { ConfigurationError, TransportError } from '../../client/errors.ts'
import { Bystander, retried, withoutStack } from '../errors.ts'
import { stepView } from '../npz/index.ts'
import { type Action, callSite, type EpisodeContext, type Observation, type PolicyObject, type StepContext } from '../policy.ts'
import { isNdArray, packObservation, unpackReply } from './msgpack-numpy.ts'
import { type KeyMap, renameKeys } from './key-map.ts'
import { PolicyServerError, PolicyServerTimeout, Resend, Unreachable } from './errors.ts'
import { serverUrl } from './url.ts'

export { PolicyServerError, PolicyServerTimeout } from './errors.ts'

/** The subset of the WHATWG `WebSocket` used (global on Deno, Bun, browsers and Node >= 22; the `ws` package's on Node 20). */
export interface WebSocketLike {
  /** Set to `'arraybuffer'` so binary messages arrive as `ArrayBuffer`s. */
  binaryType: string
  /** 0 connecting, 1 open, 2 closing, 3 closed. */
  readonly readyState: number
  /** Sends one binary message. */
  send(data: Uint8Array): void
  /** Closes the connection with an optional code and reason. */
  close(code?: number, reason?: string): void
  /** Listens for the socket's events. */
  addEventListener(
    type: 'open' | 'message' | 'close' | 'error',
    listener: (event: { data?: unknown; code?: number; reason?: string; message?: string }) => void,
  ): void
}

/**
 * A `WebSocket` class: the global one, or the `ws` package's on Node 20.
 * `headers` is passed only when `WebsocketPolicyOptions.headers` is set
 * (the `ws` package, Deno and Bun take it as the second argument).
 */
export type WebSocketConstructor = new (url: string, options?: { headers: Record<string, string> }) => WebSocketLike

/**
 * Where `websocketPolicy` connects and how it renames keys, for an
 * openpi-style policy server speaking msgpack-numpy.
 *
 * @example
 * const policy = websocketPolicy({ url: 'ws://127.0.0.1:8000', observationKeys: { '/joint_states/position': 'observation/state' }, actionKeys: { actions: '/joint_states/position' } })
 */
export interface WebsocketPolicyOptions {
  /** `ws://host:port` or `wss://...` (a path is kept). */
  url: string
  /** Renames observation keys before sending: `{ '/joint_states/position': 'observation/state' }`. */
  observationKeys?: KeyMap
  /** Renames reply keys to the baseline's action namespaces: `{ actions: '/joint_states/position' }`. */
  actionKeys?: KeyMap
  /** The WebSocket class (default: the global one; on Node 20 pass `WebSocket` from the `ws` package). */
  WebSocket?: WebSocketConstructor
  /** Steps sent ahead of the answers (default 16, or 4 chunks with `actionHorizon`; openpi's server answers in order). See `PolicyObject.pipelineDepth`. */
  pipelineDepth?: number
  /**
   * The server answers with a chunk of this many steps' actions (each array's
   * first axis): ask every `actionHorizon` steps and hand out one row per
   * step, as openpi-client's `ActionChunkBroker` does (default 1: one
   * `infer` per step, its answer used as it is).
   */
  actionHorizon?: number
  /**
   * Sent as `prompt` with every observation (openpi's key for the task
   * instruction; an `observationKeys` entry renames it): a fixed text, or
   * one per episode from its context (`context.metadata`). A function that
   * throws fails that episode.
   */
  prompt?: string | ((context: EpisodeContext) => string)
  /**
   * Headers of the connection request, such as openpi's
   * `{ Authorization: 'Api-Key <key>' }` for a server that wants a key.
   * Browsers' `WebSocket` cannot send headers; the `ws` package, Deno's and
   * Bun's can.
   */
  headers?: Record<string, string>
  /** Told once, on the first step, about `observationKeys` entries the recorded observation lacks (a typo, say). */
  onWarning?: (text: string) => void
  /**
   * How long to keep trying to reconnect, in milliseconds, once a server
   * that was reached has gone away (default 30,000: time for a supervisor to
   * restart it). Past it the step waiting throws a `TransportError`. The
   * first connection is not retried: a server that is not there is a
   * `ConfigurationError` at once.
   */
  reconnectMs?: number
  /**
   * How long a connection may take, in milliseconds, from opening the socket
   * to the server's metadata message (default: `timeoutMs` when given, at
   * most 30,000). A server that accepts the TCP connection but never
   * completes the handshake or never sends its metadata fails then, as one
   * that is not there does.
   */
  connectTimeoutMs?: number
  /**
   * The longest one `infer` may wait for its answer once it is the oldest
   * one asked, in milliseconds. Past it the episode fails (`did not answer
   * within ...`), the connection is closed and the next episode reconnects.
   * Default: no limit.
   */
  timeoutMs?: number
}

/** The policy object `websocketPolicy` returns: each `act` is one request/reply on the socket. */
export interface WebsocketPolicy extends PolicyObject {
  /** Connects and waits for the server's metadata message. */
  open(): Promise<void>
  /** Closes the connection. */
  close(): Promise<void>
  /** The metadata message the server sent on connect (null before `open`). */
  metadata: unknown
}

interface Waiter {
  resolve(message: Uint8Array): void
  reject(error: Error): void
  where: string
  /** The episode the step belongs to: a failure of another episode's step only makes it a bystander. */
  episode: number
}

/**
 * A policy object for `runAgainst` backed by an openpi-style policy server.
 * One connection; each step is one round trip (one every `actionHorizon`
 * steps for a server that answers with chunks; with `concurrency` above 1,
 * requests are pipelined and answered in order, as openpi's server does).
 *
 * @example
 * import WebSocket from 'ws' // Node 20 only
 * const policy = websocketPolicy({ url: 'ws://gpu-box:8000', WebSocket, actionKeys: { actions: '/joint_states/position' } })
 * try { await runAgainst(run, policy) } finally { await policy.close() }
 */
export function websocketPolicy(options: WebsocketPolicyOptions): WebsocketPolicy {
  const href = serverUrl(options?.url)
  const horizon = options.actionHorizon ?? 1
  if (!Number.isInteger(horizon) || horizon < 1) throw new ConfigurationError(`websocketPolicy: actionHorizon must be a positive integer (got ${horizon})`)
  const Socket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
  if (!Socket) throw new ConfigurationError('websocketPolicy: this runtime has no global WebSocket; pass options.WebSocket (e.g. from the "ws" package)')
  const timeoutMs = options.timeoutMs ?? Infinity
  if (!(timeoutMs > 0)) throw new ConfigurationError(`websocketPolicy: timeoutMs must be a positive number (got ${options.timeoutMs})`)
  const reconnectMs = options.reconnectMs ?? 30_000
  if (!(reconnectMs >= 0)) throw new ConfigurationError(`websocketPolicy: reconnectMs must be a number >= 0 (got ${options.reconnectMs})`)
  const connectMs = options.connectTimeoutMs ?? Math.min(timeoutMs, 30_000)
  if (!(connectMs > 0)) throw new ConfigurationError(`websocketPolicy: connectTimeoutMs must be a positive number (got ${options.connectTimeoutMs})`)
  let connection: Connection | null = null
  let connecting: Promise<Connection> | null = null
  /** True once a connection got its metadata: from then on a lost server is waited for. */
  let reached = false
  /** Set by `close()`: no connection is made after it. */
  let closing = false

  // Times the oldest infer only: the ones behind it wait for the server's queue, not for one inference.
  const watch = (conn: Connection) => {
    clearTimeout(conn.timer)
    conn.timer = undefined
    const head = conn.waiters[0]
    if (head && timeoutMs < Infinity) conn.timer = setTimeout(() => expire(conn, head), Math.min(timeoutMs, 2 ** 31 - 1))
  }
  const expire = (conn: Connection, head: Waiter) => {
    const seconds = +(timeoutMs / 1000).toPrecision(3)
    conn.failure = new PolicyServerTimeout(
      `policy server ${options.url} did not answer within ${seconds} s (${head.where}); the connection was closed`,
    )
    conn.failedEpisode = head.episode
    if (connection === conn) connection = null
    const waiting = conn.waiters
    conn.waiters = []
    for (const waiter of waiting) waiter.reject(failureFor(conn, waiter))
    conn.ws.close(1000, 'no answer in time')
  }

  const connect = (): Promise<Connection> =>
    new Promise((resolve, reject) => {
      const ws = options.headers ? new Socket(href, { headers: options.headers }) : new Socket(href)
      ws.binaryType = 'arraybuffer'
      const conn: Connection = { ws, waiters: [], failure: null, failedEpisode: null, timer: undefined, answered: 0 }
      let greeted = false
      const seconds = +(connectMs / 1000).toPrecision(3)
      const handshake = setTimeout(() => {
        greeted = true // whatever comes later on this socket is not its metadata
        reject(
          new Unreachable(
            `policy server ${options.url} did not complete the connection (WebSocket handshake and metadata message) within ${seconds} s (is it an openpi-style policy server?)`,
          ),
        )
        ws.close()
      }, Math.min(connectMs, 2 ** 31 - 1))
      ws.addEventListener('message', (event) => {
        if (!greeted) {
          greeted = true
          clearTimeout(handshake)
          try {
            policy.metadata = unpackReply(asBytes(event.data))
            connection = conn
            reached = true
            resolve(conn)
          } catch (error) {
            reject(new ConfigurationError(`policy server at ${options.url} sent no msgpack metadata on connect: ${(error as Error).message}`))
            ws.close()
          }
          return
        }
        const waiter = conn.waiters.shift()
        watch(conn)
        if (!waiter) return
        if (typeof event.data === 'string') {
          // openpi's server: a text frame is the traceback of an exception, and it closes next;
          // this connection is done, the next episode opens a new one.
          conn.failure = new PolicyServerError(event.data, waiter.where)
          conn.failedEpisode = waiter.episode
          if (connection === conn) connection = null
          waiter.reject(conn.failure)
        } else {
          conn.answered++
          waiter.resolve(asBytes(event.data))
        }
      })
      ws.addEventListener('error', (event) => {
        if (greeted) return
        clearTimeout(handshake)
        const reason = event.message ?? 'connection failed'
        // openpi's server answers 401 to a missing or wrong key.
        const hint = /\b40[13]\b/.test(reason) ? ' (does the server want a key? the CLI sends EPISODIC_POLICY_API_KEY; the library, `headers`)' : ''
        reject(new Unreachable(`cannot connect to policy server ${options.url}: ${reason}${hint}`))
      })
      ws.addEventListener('close', (event) => {
        clearTimeout(handshake)
        if (connection === conn) connection = null
        if (!greeted) reject(new Unreachable(`policy server ${options.url} closed the connection before sending metadata (code ${event.code})`))
        const closed = `policy server ${options.url} closed the connection (code ${event.code}${event.reason ? `: ${event.reason}` : ''})`
        const pending = conn.waiters
        conn.waiters = []
        clearTimeout(conn.timer)
        if (pending.length === 0) return
        if (!conn.failure && (event.code === 1000 || event.code === 1001)) {
          // The server ended the connection and answered none of these: each goes out again on a new one. After a
          // connection that answered something (a server closing every N answers) as often as it takes: each such
          // close answers the oldest step, so a step waits out at most its place in the queue; otherwise once.
          for (const waiter of pending) {
            const cause = withoutStack(new Error(`${closed} (${waiter.where})`))
            waiter.reject(conn.answered > 0 ? new Resend(cause) : new Bystander(cause))
          }
          return
        }
        // Died with steps waiting: the oldest one's episode fails (as a crashed Python process's does); the others' are sent again.
        if (!conn.failure) {
          conn.failure = withoutStack(new Error(`${closed} (${pending[0]!.where})`))
          conn.failedEpisode = pending[0]!.episode
        }
        for (const waiter of pending) waiter.reject(failureFor(conn, waiter))
      })
    })
  /** Connects again after the server went away, for up to `reconnectMs`; then a TransportError stops the run. */
  const reconnect = async (): Promise<Connection> => {
    const deadline = Date.now() + reconnectMs
    for (let delay = 100;; delay = Math.min(2 * delay, 2_000)) {
      try {
        return await connect()
      } catch (error) {
        if (!(error instanceof Unreachable)) throw error
        const left = deadline - Date.now()
        if (left <= 0 || closing) {
          const seconds = +(reconnectMs / 1000).toPrecision(3)
          throw new TransportError(`policy server ${options.url} went away and could not be reached again within ${seconds} s (${error.message})`)
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)))
      }
    }
  }
  const ensureOpen = async (): Promise<void> => {
    // A connection the server is closing (its close frame read, the close event still to come) takes no more steps.
    if (connection && connection.ws.readyState === OPEN) return
    connection = null
    connecting ??= (reached ? reconnect() : connect()).finally(() => {
      connecting = null
    })
    await connecting
  }

  // The prompt of each episode in progress (episodes replay concurrently with `concurrency`).
  const prompts = new Map<number, string>()

  let mapChecked = false
  /** One `infer` round trip: the server's answer, keys renamed. */
  const infer = async (observation: Observation, context: StepContext): Promise<Action> => {
    const prompt = prompts.get(context.episodeIndex)
    const sent: Record<string, unknown> = prompt === undefined ? observation : { ...observation, prompt }
    if (!mapChecked && options.observationKeys && options.onWarning) {
      // A mistyped key map renames nothing and the server sees the recorded names: say so once.
      mapChecked = true
      const unknown = Object.keys(options.observationKeys).filter((key) => key !== 'prompt' && !Object.hasOwn(sent, key))
      if (unknown.length) {
        options.onWarning(
          `the observation key map names ${unknown.map((k) => `"${k}"`).join(', ')}, which the recorded observation lacks (it has: ${
            Object.keys(observation).join(', ')
          })`,
        )
      }
    }
    const message = packObservation(renameKeys(sent, options.observationKeys))
    const where = callSite(context, context.step)
    const ask = async (): Promise<Uint8Array> => {
      // Another episode's failure (or the server) closed the connection: this step goes out on a new one.
      await ensureOpen()
      const conn = connection
      if (!conn) throw new Error(`policy server ${options.url} closed the connection again at ${where}`)
      return await new Promise<Uint8Array>((resolve, reject) => {
        conn.waiters.push({ resolve, reject, where, episode: context.episodeIndex })
        if (conn.waiters.length === 1) watch(conn)
        conn.ws.send(message)
      })
    }
    // Sent once more when it only waited behind another episode's failed step (openpi's infer holds no state).
    const resending = async (): Promise<Uint8Array> => {
      for (;;) {
        try {
          return await ask()
        } catch (error) {
          if (!(error instanceof Resend)) throw error
        }
      }
    }
    const reply = await resending().catch((error: unknown) => retried(error, resending))
    let action: unknown
    try {
      action = unpackReply(reply)
    } catch (error) {
      throw new TypeError(`policy server ${options.url} replied with a message that is not msgpack at ${where} (${(error as Error).message})`)
    }
    if (action === null || typeof action !== 'object' || Array.isArray(action)) {
      throw new TypeError(`policy server replied with ${Array.isArray(action) ? 'an array' : typeof action} at ${where}; expected a map of actions`)
    }
    return renameKeys(action as Record<string, unknown>, options.actionKeys)
  }

  // The chunk each episode in progress is reading from (episodes replay concurrently with `concurrency`).
  const chunks = new Map<number, { start: number; answer: Promise<Action> }>()
  const fromChunk = async (observation: Observation, context: StepContext): Promise<Action> => {
    let chunk = chunks.get(context.episodeIndex)
    if (!chunk || context.step < chunk.start || context.step >= chunk.start + horizon) {
      chunk = { start: context.step, answer: infer(observation, context) }
      chunk.answer.catch(() => {}) // the step that asked reports it
      chunks.set(context.episodeIndex, chunk)
    }
    const row = context.step - chunk.start
    const answer = await chunk.answer
    const action: Action = {}
    for (const [key, value] of Object.entries(answer)) {
      if (!isNdArray(value)) {
        action[key] = value
        continue
      }
      if (value.shape.length === 0 || value.shape[0]! <= row) {
        throw new RangeError(
          `policy server's "${key}" has ${value.shape.length === 0 ? 'no steps (a 0-d array)' : `${value.shape[0]} steps`} at ${
            callSite(context, chunk.start)
          }; the action horizon is ${horizon}`,
        )
      }
      action[key] = stepView(value, row)
    }
    return action
  }

  const policy: WebsocketPolicy = {
    metadata: null,
    // Replay is open loop: several chunks' observations may be asked for ahead of the answers.
    pipelineDepth: options.pipelineDepth ?? Math.max(16, 4 * horizon),
    open: ensureOpen,
    async reset(context) {
      chunks.delete(context.episodeIndex)
      prompts.delete(context.episodeIndex)
      const prompt = typeof options.prompt === 'function' ? options.prompt(context) : options.prompt
      if (prompt !== undefined) {
        if (typeof prompt !== 'string') throw new TypeError(`the prompt for ${callSite(context)} is ${typeof prompt}, not a string`)
        prompts.set(context.episodeIndex, prompt)
      }
      await ensureOpen()
    },
    async act(observation: Observation, context: StepContext): Promise<Action> {
      let done = context.step === context.steps - 1
      try {
        return await (horizon === 1 ? infer(observation, context) : fromChunk(observation, context))
      } catch (error) {
        done = true // a failed step ends its episode
        throw error
      } finally {
        // Steps come in order within an episode (every earlier one already sent): its state can go.
        if (done) {
          chunks.delete(context.episodeIndex)
          prompts.delete(context.episodeIndex)
        }
      }
    },
    async close() {
      closing = true
      // A connection being made when close() is called is closed once made.
      await connecting?.catch(() => {})
      const open = connection
      connection = null
      if (!open) return
      const closed = new Promise<void>((resolve) => open.ws.addEventListener('close', () => resolve()))
      open.ws.close(1000, 'replay done')
      await closed
    },
  }
  return policy
}

/** WebSocket's `readyState` of an open connection. */
const OPEN = 1

interface Connection {
  ws: WebSocketLike
  waiters: Waiter[]
  failure: Error | null
  /** The episode whose step the failure belongs to. */
  failedEpisode: number | null
  /** Answers received on this connection (a clean close after some is a server that closes every N). */
  answered: number
  /** Fails the oldest waiter when `timeoutMs` passes without an answer. */
  timer: ReturnType<typeof setTimeout> | undefined
}

/** The failure as a waiter on `conn` gets it: its own episode's, or a `Bystander`'s of another's. */
function failureFor(conn: Connection, waiter: Waiter): Error {
  const failure = conn.failure!
  return conn.failedEpisode !== null && waiter.episode !== conn.failedEpisode ? new Bystander(failure) : failure
}

function asBytes(data: unknown): Uint8Array {
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  throw new TypeError(`expected a binary message, got ${typeof data}`)
}
