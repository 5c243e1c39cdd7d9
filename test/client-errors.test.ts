/**
 * The client library's error classes where the replay client meets them:
 * the server rejecting a metric blob (ValidationError), the network failing
 * while downloading an artifact or uploading a result (TransportError), the
 * key being revoked in the middle of a run (AuthError), and uploads to signed
 * URLs carrying no API key. In-process: the client's `fetch` is the app's
 * `app.request`, wrapped where a test needs the network to fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { AuthError, TransportError, ValidationError } from '../src/client/errors.ts'
import type { Observation } from '../src/replay/episode.ts'
import { recordEpisode } from '../src/client/uploads.ts'
import { completeRun, createRun } from '../src/replay/eval-run.ts'
import { runAgainst } from '../src/replay/run.ts'
import { recordBaseline } from './helpers/baselines.ts'
import { startService, type TestService } from './helpers/service.ts'
import { withContentLength } from './conformance/target.ts'

type Seen = { method: string; url: string; headers: Headers }

let svc: TestService
let tenant: { key: string; keyId: string }
let baselines: string[]

/** A client on the in-process app; `fail` makes a request fail as a dropped connection does. */
function client(options: { key?: string; fail?: (request: Seen) => boolean; seen?: Seen[] } = {}): EpisodicClient {
  // deno-lint-ignore require-await -- a fetch double: a thrown failure must come back as a rejected promise
  const fetchHere = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request: Seen = { method: init?.method ?? 'GET', url: String(input), headers: new Headers(init?.headers) }
    options.seen?.push(request)
    if (options.fail?.(request)) throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) })
    return svc.app.request(String(input), withContentLength(init))
  }
  return new EpisodicClient({ apiKey: options.key ?? tenant.key, baseUrl: svc.url, fetch: fetchHere as typeof fetch })
}

const follow = (obs: Observation) => ({ '/joint_states/position': Array.from(obs['/joint_states/position']!.data as Float64Array) })

beforeAll(async () => {
  svc = await startService('pglite', { listen: false })
  tenant = await svc.newTenant('client-errors')
  baselines = [await recordBaseline(client()), await recordBaseline(client())]
})
afterAll(() => svc?.close())

describe('client library errors', () => {
  it('uploads to signed URLs carry the signed Content-Type and no Authorization header', async () => {
    const seen: Seen[] = []
    await recordBaseline(client({ seen }))
    const puts = seen.filter((r) => r.method === 'PUT')
    expect(puts.map((r) => new URL(r.url).pathname.split('/').pop()).sort()).toEqual(['actions.npz', 'sensors.npz'])
    for (const put of puts) {
      expect(put.headers.has('authorization')).toBe(false)
      expect(put.headers.has('x-service-key')).toBe(false)
      expect(put.headers.get('content-type')).toBe('application/octet-stream')
    }
    // The API calls around them do carry the key.
    expect(seen.filter((r) => r.method === 'POST').every((r) => r.headers.get('authorization') === `Bearer ${tenant.key}`)).toBe(true)
  })

  it('a metric blob the server rejects is a ValidationError naming the field', async () => {
    const run = await createRun({ candidatePolicyVersion: 'cand', baselineEpisodeIds: baselines.slice(0, 1), client: client() })
    const rejected = client().uploadResult(run.id!, {
      baseline_episode_id: baselines[0]!,
      status: 'done',
      metrics: { steps: 10, ood_action_share_candidate: 2 },
    })
    await expect(rejected).rejects.toBeInstanceOf(ValidationError)
    await expect(rejected).rejects.toMatchObject({ status: 400, message: expect.stringContaining('metrics.ood_action_share_candidate') })
  })

  it('a network failure while downloading a baseline artifact stops the run with a TransportError', async () => {
    const failing = client({ fail: (r) => r.method === 'GET' && new URL(r.url).pathname.startsWith('/storage/') })
    const run = await createRun({ candidatePolicyVersion: 'cand', baselineEpisodeIds: baselines, client: failing })
    const stopped = runAgainst(run, follow, { stderr: () => {} })
    await expect(stopped).rejects.toBeInstanceOf(TransportError)
    await expect(stopped).rejects.toThrow(/download of (actions|sensors) of episode .*network failure.*ECONNRESET/)
    expect(run.results).toEqual([])
  })

  it('a policy that loses its network stops the run there: no later episode starts', async () => {
    const third = await recordBaseline(client())
    const resets: number[] = []
    const policy = {
      act: follow,
      reset(context: { episodeIndex: number }) {
        resets.push(context.episodeIndex)
        // A policy server that went away for good: its reconnecting gave up.
        if (context.episodeIndex === 1) throw new TransportError('policy server went away')
      },
    }
    const run = await createRun({ candidatePolicyVersion: 'cand', baselineEpisodeIds: [...baselines, third], client: client(), dryRun: true })
    await expect(runAgainst(run, policy, { stderr: () => {} })).rejects.toThrow('policy server went away')
    expect(resets).toEqual([0, 1])
  })

  it('a network failure while uploading a result stops the run with a TransportError', async () => {
    const failing = client({ fail: (r) => r.method === 'POST' && r.url.endsWith('/result') })
    const run = await createRun({ candidatePolicyVersion: 'cand', baselineEpisodeIds: baselines, client: failing })
    const stopped = runAgainst(run, follow, { stderr: () => {} })
    await expect(stopped).rejects.toBeInstanceOf(TransportError)
    await expect(stopped).rejects.toThrow(/\/result: network failure/)
    const stored = await client().getEvalRun(run.id!)
    expect(stored.results.map((r) => r.status)).toEqual(['pending', 'pending'])
  })

  it('a key revoked in the middle of a run stops it with an AuthError', async () => {
    const victim = await svc.newTenant()
    const own = client({ key: victim.key })
    const mine = [await recordBaseline(own), await recordBaseline(own)]
    const run = await createRun({ candidatePolicyVersion: 'cand', baselineEpisodeIds: mine, client: own })
    const done: number[] = []
    const stopped = runAgainst(run, follow, {
      stderr: () => {},
      onEpisode: async (result) => {
        done.push(result.index)
        if (result.index === 1) await svc.revoke(victim)
      },
    })
    await expect(stopped).rejects.toBeInstanceOf(AuthError)
    await expect(stopped).rejects.toMatchObject({ status: 401 })
    expect(done).toEqual([1])
    await expect(completeRun(run)).rejects.toBeInstanceOf(AuthError)
  })
})

describe('client library errors by status', () => {
  const answering = (response: () => Response) =>
    new EpisodicClient({ apiKey: tenant.key, baseUrl: 'http://service.test', fetch: (() => Promise.resolve(response())) as typeof fetch })

  it('takes a 415 as a refused payload and a 429 as a ServerError with its Retry-After', async () => {
    const refused = answering(() => Response.json({ error: 'body must be sent as application/json' }, { status: 415 }))
    await expect(refused.openEpisode({})).rejects.toMatchObject({ name: 'ValidationError', status: 415 })
    const limited = answering(() => Response.json({ error: 'too many requests' }, { status: 429, headers: { 'retry-after': '7' } }))
    await expect(limited.openEpisode({})).rejects.toMatchObject({ name: 'ServerError', status: 429, retryAfterSeconds: 7 })
    // An HTTP date, as RFC 9110 allows: the seconds until then.
    const at = new Date(Date.now() + 30_000).toUTCString()
    const dated = answering(() => Response.json({ error: 'too many requests' }, { status: 429, headers: { 'retry-after': at } }))
    const error = (await dated.openEpisode({}).then(() => ({}), (e: unknown) => e)) as { retryAfterSeconds?: number }
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(28)
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(30)
  })

  it("recordEpisode's retried open waits at least what a 429 asked, and never retries a 415", async () => {
    let calls = 0
    const waits: number[] = []
    const sleep = (ms: number) => (waits.push(ms), Promise.resolve())
    const limited = answering(() => (++calls, Response.json({ error: 'slow down' }, { status: 429, headers: { 'retry-after': '3' } })))
    await expect(recordEpisode(limited, { artifacts: {}, idempotencyKey: 'k-429' }, { attempts: 3, backoffMs: 10, sleep })).rejects.toMatchObject({
      status: 429,
    })
    expect([calls, waits]).toEqual([3, [3000, 3000]])
    calls = 0
    const refused = answering(() => (++calls, Response.json({ error: 'wrong type' }, { status: 415 })))
    await expect(recordEpisode(refused, { artifacts: {}, idempotencyKey: 'k-415' }, { attempts: 3, backoffMs: 10, sleep })).rejects.toMatchObject({
      status: 415,
    })
    expect(calls).toBe(1)
  })
})
