import { describe, expect, it } from 'vitest'
import type { NdArray } from '../npz/index.ts'
import type { StepContext } from '../policy.ts'
import { packObservation, unpackReply } from './msgpack-numpy.ts'
import { ConfigurationError, TransportError } from '../../client/errors.ts'
import { type WebSocketConstructor, type WebSocketLike, websocketPolicy } from './policy.ts'

type Listener = (event: { data?: unknown; code?: number }) => void

/**
 * An in-process openpi-style server: metadata on connect, then for each
 * observation `{ x: [2] }` a chunk `actions` of `horizon` rows, row k = x + 10 k,
 * beside a non-array `info` (or, as `answer` says, a byte that is not msgpack, a close, or
 * no answer at all to x = 3 on the first connection).
 */
function chunkServer(horizon: number, answer: 'chunks' | 'garbage' | 'close' | 'stall at 3' = 'chunks') {
  const requests: number[] = []
  const received: Record<string, unknown>[] = []
  const opened: unknown[] = []
  class Socket implements WebSocketLike {
    binaryType = 'blob'
    readyState = 0
    readonly #listeners = new Map<string, Listener[]>()
    constructor(_url: string, ...options: unknown[]) {
      opened.push(options)
      queueMicrotask(() => {
        this.readyState = 1
        this.#emit('message', { data: packObservation({ policy: 'chunks' }).slice().buffer })
      })
    }
    addEventListener(type: string, listener: Listener) {
      this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener])
    }
    send(data: Uint8Array) {
      const observation = unpackReply(data) as { x: NdArray }
      received.push(observation)
      const x = observation.x.data as Float64Array
      requests.push(x[0]!)
      const rows = Float64Array.from({ length: horizon * 2 }, (_, i) => x[i % 2]! + 10 * Math.floor(i / 2))
      const reply = packObservation({ actions: { dtype: 'float64', shape: [horizon, 2], data: rows, order: 'C' }, info: 'plan' })
      if (answer === 'close') return setTimeout(() => this.close(), 1)
      if (answer === 'stall at 3' && x[0] === 3 && opened.length === 1) return
      setTimeout(() => this.#emit('message', { data: answer === 'garbage' ? Uint8Array.of(0xc1).buffer : reply.slice().buffer }), 1)
    }
    close() {
      this.readyState = 3
      queueMicrotask(() => this.#emit('close', { code: 1000 }))
    }
    #emit(type: string, event: { data?: unknown; code?: number }) {
      for (const listener of this.#listeners.get(type) ?? []) listener(event)
    }
  }
  return { Socket, requests, received, opened }
}

const observation = (step: number) => ({ x: { dtype: 'float64' as const, shape: [2], data: Float64Array.of(step, -step), order: 'C' as const } })

describe('websocketPolicy with actionHorizon', () => {
  it('asks at steps 0, H, 2H, ... and hands out one row of the chunk per step, also with steps sent ahead', async () => {
    const server = chunkServer(3)
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, actionHorizon: 3 })
    const steps = 7
    for (const episodeIndex of [0, 1]) {
      await policy.reset!({ episodeIndex, baselineEpisodeId: 'b', steps })
      // As replayEpisode with a pipeline depth: every step sent before any answer is awaited.
      const context = (step: number): StepContext => ({ step, steps, episodeIndex, baselineEpisodeId: 'b' })
      const actions = await Promise.all(Array.from({ length: steps }, (_, step) => policy.act(observation(step), context(step))))
      const rows = actions.map((a) => Array.from((a.actions as NdArray).data as Float64Array))
      expect(rows).toEqual([[0, 0], [10, 10], [20, 20], [3, -3], [13, 7], [23, 17], [6, -6]])
      expect(actions.map((a) => (a.actions as NdArray).shape)).toEqual(actions.map(() => [2]))
      expect(actions.every((a) => a.info === 'plan')).toBe(true)
    }
    expect(server.requests).toEqual([0, 3, 6, 0, 3, 6])
    await policy.close()
  })

  it('fails a step whose chunk is shorter than the horizon, naming the key and both lengths', async () => {
    const server = chunkServer(2)
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, actionHorizon: 3 })
    await policy.reset!({ episodeIndex: 0, baselineEpisodeId: 'b', steps: 3 })
    const context = (step: number): StepContext => ({ step, steps: 3, episodeIndex: 0, baselineEpisodeId: 'b' })
    expect(await policy.act(observation(0), context(0))).toMatchObject({ info: 'plan' })
    await policy.act(observation(1), context(1))
    await expect(policy.act(observation(2), context(2))).rejects.toThrow('policy server\'s "actions" has 2 steps at episode 1, step 0; the action horizon is 3')
    await policy.close()
  })

  it('sends each episode its prompt (fixed, or from the context), under a renamed key if asked', async () => {
    const server = chunkServer(1)
    const prompt = (context: { metadata?: Record<string, unknown> }) => String(context.metadata?.task ?? 'default')
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, prompt, observationKeys: { prompt: 'instruction' } })
    for (const [episodeIndex, metadata] of [[0, { task: 'pick' }], [1, {}]] as const) {
      await policy.reset!({ episodeIndex, baselineEpisodeId: 'b', steps: 2, metadata })
      for (const step of [0, 1]) await policy.act(observation(step), { step, steps: 2, episodeIndex, baselineEpisodeId: 'b', metadata })
    }
    expect(server.received.map((r) => r.instruction)).toEqual(['pick', 'pick', 'default', 'default'])
    expect(server.received.every((r) => !('prompt' in r))).toBe(true)
    // A prompt that cannot be made fails that episode's reset.
    const failing = websocketPolicy({
      url: 'ws://fake',
      WebSocket: server.Socket,
      prompt: () => {
        throw new Error('no task')
      },
    })
    await expect(failing.reset!({ episodeIndex: 0, baselineEpisodeId: 'b', steps: 1 })).rejects.toThrow('no task')
    await policy.close()
  })

  it('passes headers to the WebSocket class only when there are some', async () => {
    const server = chunkServer(1)
    const keyed = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, headers: { Authorization: 'Api-Key k' } })
    await keyed.open()
    const plain = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    await plain.open()
    expect(server.opened).toEqual([[{ headers: { Authorization: 'Api-Key k' } }], []])
    await keyed.close()
    await plain.close()
  })

  it('fails a step answered with something that is not msgpack, naming the server and the step', async () => {
    const server = chunkServer(1, 'garbage')
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    await policy.reset!({ episodeIndex: 2, baselineEpisodeId: 'b', steps: 1 })
    await expect(policy.act(observation(0), { step: 0, steps: 1, episodeIndex: 2, baselineEpisodeId: 'b' })).rejects.toThrow(
      /^policy server ws:\/\/fake replied with a message that is not msgpack at episode 3, step 0 \(/,
    )
    await policy.close()
  })

  it('sends steps again once on a new connection when the server closes cleanly with them waiting; a second close fails them', async () => {
    const server = chunkServer(1, 'close')
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    await policy.reset!({ episodeIndex: 1, baselineEpisodeId: 'b', steps: 2 })
    const context = (step: number): StepContext => ({ step, steps: 2, episodeIndex: 1, baselineEpisodeId: 'b' })
    const results = await Promise.allSettled([policy.act(observation(0), context(0)), policy.act(observation(1), context(1))])
    expect(results.map((r) => (r as PromiseRejectedResult).reason.message)).toEqual([
      'policy server ws://fake closed the connection (code 1000) (episode 2, step 0)',
      'policy server ws://fake closed the connection (code 1000) (episode 2, step 1)',
    ])
    // Each step went out on the first connection and once more on a second.
    expect(server.requests).toEqual([0, 1, 0, 1])
    expect(server.opened).toHaveLength(2)
  })

  it('refuses a horizon that is not a positive integer', () => {
    const server = chunkServer(1)
    for (const actionHorizon of [0, -1, 1.5]) {
      expect(() => websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, actionHorizon })).toThrow('actionHorizon must be a positive integer')
    }
  })
})

describe('websocketPolicy timeoutMs', () => {
  it('fails the step that gets no answer in time, closes the connection, and the next episode reconnects', async () => {
    const server = chunkServer(1, 'stall at 3')
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, timeoutMs: 1000 })
    const context = (episodeIndex: number, step: number): StepContext => ({ episodeIndex, baselineEpisodeId: 'b', steps: 5, step })
    await policy.reset!(context(0, 0))
    for (const step of [0, 1, 2]) expect(await policy.act(observation(step), context(0, step))).toHaveProperty('actions')
    const stalled = policy.act(observation(3), context(0, 3))
    await expect(stalled).rejects.toMatchObject({
      name: 'PolicyServerTimeout',
      message: 'policy server ws://fake did not answer within 1 s (episode 1, step 3); the connection was closed',
    })
    await policy.reset!(context(1, 0))
    expect(server.opened).toHaveLength(2)
    expect(await policy.act(observation(3), context(1, 3))).toHaveProperty('actions')
    await policy.close()
  })

  it('refuses a limit that is not a positive number', () => {
    expect(() => websocketPolicy({ url: 'ws://fake', timeoutMs: 0, WebSocket: chunkServer(1).Socket })).toThrow('timeoutMs must be a positive number (got 0)')
  })
})

type Plan = 'answer' | 'answer, then close' | 'die'

/**
 * A fake openpi server whose connection number `n` (from 1) answers each
 * observation `{ x }` as `plan(n, x)` says: an answer (`actions` = x), an
 * answer followed by a clean close (its close frame read at once, the close
 * event a little later, as `ws` does), or a death (1006, nothing answered).
 * `refuse(n)` makes connection n fail as a refused TCP connection does.
 */
function scriptedServer(plan: (connection: number, x: number) => Plan, refuse: (connection: number) => boolean = () => false) {
  const received: [connection: number, x: number][] = []
  let opened = 0
  let closedByClient = 0
  class Socket implements WebSocketLike {
    binaryType = 'blob'
    readyState = 0
    readonly #connection = ++opened
    readonly #listeners = new Map<string, Listener[]>()
    #dying = false
    constructor() {
      queueMicrotask(() => {
        if (refuse(this.#connection)) {
          this.readyState = 3
          this.#emit('error', { message: 'connect ECONNREFUSED 127.0.0.1:1' })
          this.#emit('close', { code: 1006 })
          return
        }
        this.readyState = 1
        this.#emit('message', { data: packObservation({ policy: 'scripted' }).slice().buffer })
      })
    }
    addEventListener(type: string, listener: Listener) {
      this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener])
    }
    send(data: Uint8Array) {
      if (this.readyState !== 1) return // as ws drops what is sent on a closing socket
      const x = ((unpackReply(data) as { x: NdArray }).x.data as Float64Array)[0]!
      received.push([this.#connection, x])
      if (this.#dying) return // a server answers in order: nothing after the observation it died on
      const what = plan(this.#connection, x)
      if (what === 'die') {
        this.#dying = true
        return void setTimeout(() => this.#close(1006), 1)
      }
      setTimeout(() => {
        if (this.readyState !== 1) return // closed after an earlier answer: this one never comes
        this.#emit('message', { data: packObservation({ actions: { dtype: 'float64', shape: [1], data: Float64Array.of(x), order: 'C' } }).slice().buffer })
        if (what === 'answer, then close') this.#close(1000)
      }, 1)
    }
    close() {
      closedByClient++
      this.#close(1000)
    }
    #close(code: number) {
      if (this.readyState >= 2) return
      this.readyState = 2
      setTimeout(() => {
        this.readyState = 3
        this.#emit('close', { code })
      }, 5)
    }
    #emit(type: string, event: { data?: unknown; code?: number; message?: string }) {
      for (const listener of this.#listeners.get(type) ?? []) listener(event)
    }
  }
  return { Socket, received, opened: () => opened, closedByClient: () => closedByClient }
}

const at = (episodeIndex: number, step: number, steps = 2): StepContext => ({ episodeIndex, step, steps, baselineEpisodeId: 'b' })
const answerOf = (action: Record<string, unknown>) => ((action.actions as NdArray).data as Float64Array)[0]

describe('websocketPolicy when the connection ends', () => {
  it('a server that closes after answering an episode: the next episode opens a new connection, nothing is lost', async () => {
    const server = scriptedServer((_, x) => (x % 10 === 1 ? 'answer, then close' : 'answer'))
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    for (const episodeIndex of [0, 1, 2]) {
      // As runAgainst with read-ahead: the next episode starts as soon as the last answer is in.
      await policy.reset!(at(episodeIndex, 0))
      const actions = await Promise.all([0, 1].map((step) => policy.act(observation(10 * episodeIndex + step), at(episodeIndex, step))))
      expect(actions.map(answerOf)).toEqual([10 * episodeIndex, 10 * episodeIndex + 1])
    }
    expect(server.opened()).toBe(3)
    expect(server.received).toEqual([[1, 0], [1, 1], [2, 10], [2, 11], [3, 20], [3, 21]])
    await policy.close()
  })

  it('a server that closes after every answer, steps sent ahead: each waiting step goes out again until answered', async () => {
    const server = scriptedServer(() => 'answer, then close')
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    await policy.reset!(at(0, 0, 5))
    const actions = await Promise.all([0, 1, 2, 3, 4].map((step) => policy.act(observation(step), at(0, step, 5))))
    expect(actions.map(answerOf)).toEqual([0, 1, 2, 3, 4])
    expect(server.opened()).toBe(5)
    await policy.close()
  })

  it('a server that dies fails the episode of the oldest step waiting; the other episode in flight goes on on a new connection', async () => {
    const server = scriptedServer((connection, x) => (connection === 1 && x === 1 ? 'die' : 'answer'))
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    await policy.reset!(at(0, 0))
    await policy.reset!(at(1, 0))
    expect(answerOf(await policy.act(observation(0), at(0, 0)))).toBe(0)
    const [dying, bystander] = await Promise.allSettled([policy.act(observation(1), at(0, 1)), policy.act(observation(100), at(1, 0))])
    expect((dying as PromiseRejectedResult).reason.message).toBe('policy server ws://fake closed the connection (code 1006) (episode 1, step 1)')
    expect(answerOf((bystander as PromiseFulfilledResult<Record<string, unknown>>).value)).toBe(100)
    expect(server.received).toEqual([[1, 0], [1, 1], [1, 100], [2, 100]])
    await policy.close()
  })

  it('a server that went away is waited for: reconnected once it is back', async () => {
    const server = scriptedServer((connection, x) => (connection === 1 && x === 1 ? 'die' : 'answer'), (connection) => connection === 2 || connection === 3)
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    await policy.reset!(at(0, 0))
    await policy.act(observation(0), at(0, 0))
    await expect(policy.act(observation(1), at(0, 1))).rejects.toThrow('(code 1006)')
    // Connections 2 and 3 are refused (a supervisor restarting the server); the 4th gets through.
    await policy.reset!(at(1, 0))
    expect(answerOf(await policy.act(observation(10), at(1, 0)))).toBe(10)
    expect(server.opened()).toBe(4)
    await policy.close()
  })

  it('a server that stays away stops the run with a TransportError once reconnectMs has passed', async () => {
    const server = scriptedServer((_, x) => (x === 1 ? 'die' : 'answer'), (connection) => connection > 1)
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, reconnectMs: 300 })
    await policy.reset!(at(0, 0))
    await policy.act(observation(0), at(0, 0))
    await expect(policy.act(observation(1), at(0, 1))).rejects.toThrow('(code 1006)')
    const stopped = await Promise.resolve(policy.reset!(at(1, 0))).catch((error: unknown) => error)
    expect(stopped).toBeInstanceOf(TransportError)
    expect((stopped as Error).message).toBe(
      'policy server ws://fake went away and could not be reached again within 0.3 s (cannot connect to policy server ws://fake: connect ECONNREFUSED 127.0.0.1:1)',
    )
    expect(server.opened()).toBeGreaterThan(2)
  })

  it('close() while a connection is being made closes it once made', async () => {
    const server = scriptedServer(() => 'answer')
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    const opening = policy.open()
    await policy.close()
    await opening
    // Before, close() saw no connection yet and returned; the one then made stayed open.
    expect([server.opened(), server.closedByClient()]).toEqual([1, 1])
  })

  it('close() stops waiting for a server that went away', async () => {
    const server = scriptedServer((_, x) => (x === 1 ? 'die' : 'answer'), (connection) => connection > 1)
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket, reconnectMs: 60_000 })
    await policy.reset!(at(0, 0))
    await policy.act(observation(0), at(0, 0))
    await expect(policy.act(observation(1), at(0, 1))).rejects.toThrow('(code 1006)')
    const waiting = Promise.resolve(policy.reset!(at(1, 0))).catch((error: unknown) => error)
    const t0 = Date.now()
    await policy.close()
    expect(await waiting).toBeInstanceOf(TransportError)
    expect(Date.now() - t0).toBeLessThan(10_000)
  })

  it('a server that never sends its metadata fails the connection after connectTimeoutMs, as one that is not there', async () => {
    class Silent implements WebSocketLike {
      binaryType = 'blob'
      readyState = 1
      closed = 0
      addEventListener() {}
      send() {}
      close() {
        this.closed++
      }
    }
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: Silent, connectTimeoutMs: 50 })
    await expect(policy.open()).rejects.toThrow(
      new ConfigurationError(
        'policy server ws://fake did not complete the connection (WebSocket handshake and metadata message) within 0.05 s (is it an openpi-style policy server?)',
      ),
    )
  })

  it('a TCP server that never answers the handshake is given up on (ws package, a real socket)', async () => {
    const { createServer } = await import('node:net')
    const { default: WebSocket } = await import('ws')
    const sockets: import('node:net').Socket[] = []
    const server = createServer((socket) => void sockets.push(socket)) // accepts, reads, never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `ws://127.0.0.1:${(server.address() as { port: number }).port}`
    try {
      const policy = websocketPolicy({ url, WebSocket: WebSocket as unknown as WebSocketConstructor, timeoutMs: 300 })
      const t0 = Date.now()
      await expect(policy.open()).rejects.toThrow(
        `policy server ${url} did not complete the connection (WebSocket handshake and metadata message) within 0.3 s`,
      )
      expect(Date.now() - t0).toBeLessThan(5_000)
    } finally {
      for (const socket of sockets) socket.destroy()
      server.close()
    }
  })

  it('the first connection is not retried: a server that is not there is a ConfigurationError at once', async () => {
    const server = scriptedServer(() => 'answer', () => true)
    const policy = websocketPolicy({ url: 'ws://fake', WebSocket: server.Socket })
    await expect(policy.open()).rejects.toThrow(ConfigurationError)
    expect(server.opened()).toBe(1)
  })
})

describe('websocketPolicy observation key map', () => {
  it('warns once, on the first step, about mapped keys the observation lacks (a typo), and still sends', async () => {
    const server = scriptedServer(() => 'answer')
    const warnings: string[] = []
    const policy = websocketPolicy({
      url: 'ws://fake',
      WebSocket: server.Socket,
      observationKeys: { '/joint_state/x': 'observation/state', prompt: 'instruction' },
      onWarning: (text) => warnings.push(text),
    })
    await policy.reset!(at(0, 0))
    for (const step of [0, 1]) await policy.act(observation(step), at(0, step))
    expect(warnings).toEqual(['the observation key map names "/joint_state/x", which the recorded observation lacks (it has: x)'])
    await policy.close()
  })
})

describe('websocketPolicy url', () => {
  it('refuses an address a WebSocket cannot open, saying why; takes the scheme in any case', () => {
    const Socket = scriptedServer(() => 'answer').Socket
    const refused = (url: string) => {
      try {
        websocketPolicy({ url, WebSocket: Socket })
      } catch (error) {
        return [(error as Error).name, (error as Error).message]
      }
      return null
    }
    expect(refused('ws://127.0.0.1:99999')).toEqual([
      'ConfigurationError',
      'websocketPolicy: url "ws://127.0.0.1:99999" is not a valid URL (host and port 1-65535?)',
    ])
    expect(refused('ws://127.0.0.1:abc')).toEqual([
      'ConfigurationError',
      'websocketPolicy: url "ws://127.0.0.1:abc" is not a valid URL (host and port 1-65535?)',
    ])
    expect(refused('ws://h:1/policy#frag')).toEqual([
      'ConfigurationError',
      'websocketPolicy: url "ws://h:1/policy#frag" has a fragment (#...), which a WebSocket URL cannot have',
    ])
    expect(refused('ws://127.0.0.1:0')).toEqual([
      'ConfigurationError',
      'websocketPolicy: url "ws://127.0.0.1:0" names port 0, which no server listens on (host and port 1-65535?)',
    ])
    expect(refused('http://h:1')).toEqual(['ConfigurationError', 'websocketPolicy: url must start with ws:// or wss:// (got "http://h:1")'])
    expect(refused('WS://h:1')).toBeNull()
    expect(refused('wss://[::1]:8000/ws')).toBeNull()
  })
})
