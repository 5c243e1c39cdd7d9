/**
 * `eval_run.completed` webhooks end to end (contract, "Webhooks"): real
 * servers (Node adapter, their own delivery timer) post to a real HTTP
 * receiver that checks every request with the reference Standard Webhooks
 * verifier (the `standardwebhooks` package). Covers the body, one delivery
 * per endpoint and finalize, retries with the same id until one success, a
 * restart mid-retry, a lapsed lease, and several instances sending once; on
 * PGlite and on the real PostgreSQL server.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createNodeApp, serveNode } from '../adapters/node/index.ts'
import { createClient, createKey } from '../src/admin/admin.ts'
import type { EpisodicApp } from '../src/app.ts'
import { readConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/open.ts'
import { deliverWebhooks } from '../src/webhooks/deliver.ts'
import { addWebhook } from '../src/webhooks/endpoints.ts'
import { startWebhookDelivery } from '../src/webhooks/loop.ts'
import { DATABASES } from './helpers/databases.ts'
import { call } from './helpers/http.ts'
import { seedDataDir } from './helpers/pglite.ts'
import { createTempDatabase } from './helpers/postgres.ts'

const SLOW = 120_000

interface Received {
  path: string
  id: string
  headers: IncomingHttpHeaders
  raw: string
  body: any
  /** The reference verifier's verdict on this request. */
  verified: boolean
  answered: number
}

/** An HTTP receiver: one secret per path, answers chosen per request, every request verified. */
async function startReceiver() {
  const secrets = new Map<string, string>()
  const received: Received[] = []
  const answer = {
    status: (_nthForId: number, _path: string) => 200,
    delayMs: 0,
    hang: (_nthForId: number, _path: string) => false,
    /** The body of an answer; undefined: `ok` or `receiver says no`. */
    body: (_path: string): Uint8Array | undefined => undefined,
  }
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (raw += chunk))
    req.on('end', async () => {
      const path = req.url ?? '/'
      const secret = secrets.get(path)
      let verified = false
      try {
        if (secret) verified = new Webhook(secret).verify(raw, req.headers as Record<string, string>) !== undefined
      } catch {
        // a signature that does not verify stays unverified
      }
      const id = String(req.headers['webhook-id'])
      const nth = received.filter((r) => r.id === id).length + 1
      const status = verified ? answer.status(nth, path) : 400
      let body: unknown
      try {
        body = JSON.parse(raw)
      } catch {
        // not JSON: recorded as undefined
      }
      received.push({ path, id, headers: req.headers, raw, body, verified, answered: status })
      if (answer.hang(nth, path)) return
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs))
      res.writeHead(status, { 'content-type': 'text/plain' }).end(answer.body(path) ?? (status === 200 ? 'ok' : 'receiver says no'))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    received,
    answer,
    url: (path: string) => `${base}${path}`,
    secret: (path: string, secret: string) => void secrets.set(path, secret),
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done())
        server.closeAllConnections()
      }),
  }
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}
const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms))

describe.each(DATABASES)('eval_run.completed webhooks on %s', (kind) => {
  let dataDir: string
  let temp: Awaited<ReturnType<typeof createTempDatabase>> | undefined
  let receiver: Receiver
  /** Milliseconds every server's clock runs ahead of real time. */
  let offset = 0
  const clock = { now: () => new Date(Date.now() + offset) }
  const running: Array<{ close(): Promise<void> }> = []
  const errors: unknown[] = []

  beforeAll(async () => {
    temp = kind === 'postgres' ? await createTempDatabase() : undefined
    receiver = await startReceiver()
  })
  afterEach(async () => {
    for (const server of running.splice(0).reverse()) await server.close()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }, SLOW)
  afterAll(async () => {
    await receiver?.close()
    await temp?.drop()
  })

  /** A server as `episodic serve` runs one: its own delivery timer (every 20 ms here) unless `deliver` is false. */
  async function startServer(deliver = true): Promise<{ url: string; app: EpisodicApp; close(): Promise<void> }> {
    const config = readConfig({
      EPISODIC_DATA_DIR: dataDir,
      EPISODIC_STORAGE: 'none',
      EPISODIC_WEBHOOK_INTERVAL_MS: deliver ? '20' : '0',
      ...(temp ? { DATABASE_URL: temp.url } : {}),
    })
    const node = await createNodeApp(config, { clock, logger: { error: (_m, error) => errors.push(error) } })
    const server = await serveNode(node.app, { port: 0 })
    let closed = false
    const handle = {
      url: server.url,
      app: node.app,
      async close() {
        if (closed) return
        closed = true
        await server.close()
        await node.close()
      },
    }
    running.push(handle)
    return handle
  }

  /** A fresh data folder (PGlite's database lives in it) for each test; PostgreSQL is shared. */
  /** A new data folder; on PGlite its database starts from the migrated snapshot (no initdb per server). */
  async function freshData(): Promise<void> {
    dataDir = mkdtempSync(join(tmpdir(), 'episodic-webhooks-'))
    offset = 0
    if (!temp) return await seedDataDir(dataDir)
    // The shared PostgreSQL keeps earlier tests' deliveries, some with a retry due within the
    // minute: a test counting what one pass attempts (with a clock run ahead) would claim them too.
    const db = await openDatabase({ url: temp.url, max: 1 }) // migrates it before the first test's server does
    try {
      await db.deleteFrom('webhook_deliveries').execute()
    } finally {
      await db.destroy()
    }
  }

  let tenants = 0
  async function tenant(app: EpisodicApp) {
    const name = `wh-${++tenants}-${Math.random().toString(36).slice(2, 6)}`
    await createClient(app.deps, name)
    return { name, key: (await createKey(app.deps, name)).key }
  }

  async function endpoint(app: EpisodicApp, client: string, path: string) {
    const added = await addWebhook(app.deps, client, receiver.url(path))
    receiver.secret(path, added.secret)
    return added
  }

  /** Creates a run over one baseline, with one failed result, and returns its id. */
  async function evalRun(url: string, key: string, name = 'nightly'): Promise<string> {
    const opened = await call(`${url}/api/ingest/episode`, { key, body: { request_uploads: [] } })
    expect(opened.status).toBe(201)
    const run = await call(`${url}/api/ingest/eval-run`, {
      key,
      body: { name, candidate_policy_version: 'cand-v2', baseline_policy_version: 'base-v1', baseline_episode_ids: [opened.body.episode_id] },
    })
    expect(run.status).toBe(201)
    const result = await call(`${url}/api/ingest/eval-run/${run.body.eval_run_id}/result`, {
      key,
      body: { baseline_episode_id: opened.body.episode_id, status: 'failed', error: 'policy raised' },
    })
    expect(result.status).toBe(200)
    return run.body.eval_run_id
  }

  const finalize = (url: string, key: string, runId: string) => call(`${url}/api/ingest/eval-run/${runId}/finalize`, { key, body: {} })
  const to = (path: string) => receiver.received.filter((r) => r.path === path)
  const deliveryRows = (app: EpisodicApp, runId: string) =>
    app.deps.db.selectFrom('webhook_deliveries').selectAll().where('eval_run_id', '=', runId).orderBy('endpoint_id').execute()

  it('posts one signed eval_run.completed per endpoint, once even when finalize is repeated', async () => {
    await freshData()
    const server = await startServer()
    const lab = await tenant(server.app)
    const other = await tenant(server.app)
    const path = `/lab-a-${kind}`
    const a = await endpoint(server.app, lab.name, path)
    await endpoint(server.app, lab.name, `/lab-b-${kind}`)
    await endpoint(server.app, other.name, `/other-${kind}`)

    const runId = await evalRun(server.url, lab.key)
    // Two finalizes at once, and one more later: one delivery per endpoint.
    const [first, second] = await Promise.all([finalize(server.url, lab.key, runId), finalize(server.url, lab.key, runId)])
    expect([first.status, second.status]).toEqual([200, 200])
    expect(second.body.updated_at).toBe(first.body.updated_at)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)

    await until('both endpoints', () => to(path).length === 1 && to(`/lab-b-${kind}`).length === 1)
    await settle()
    expect(to(path)).toHaveLength(1)
    expect(to(`/lab-b-${kind}`)).toHaveLength(1)
    expect(to(`/other-${kind}`)).toHaveLength(0)

    const got = to(path)[0]!
    expect(got.verified).toBe(true)
    expect(got.headers['content-type']).toBe('application/json')
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/)
    const read = await call(`${server.url}/api/eval-runs/${runId}`, { key: lab.key })
    expect(Object.keys(got.body)).toEqual(['type', 'id', 'created_at', 'data'])
    expect(got.body).toEqual({
      type: 'eval_run.completed',
      id: got.id,
      created_at: first.body.updated_at,
      data: {
        eval_run_id: runId,
        name: 'nightly',
        candidate_policy_version: 'cand-v2',
        baseline_policy_version: 'base-v1',
        summary: read.body.summary,
      },
    })
    expect(got.id).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(to(`/lab-b-${kind}`)[0]!.id).not.toBe(got.id)

    const rows = await deliveryRows(server.app, runId)
    expect(rows).toHaveLength(2)
    expect(rows.map((r) => [r.status, r.attempts, r.last_status])).toEqual([
      ['delivered', 1, 200],
      ['delivered', 1, 200],
    ])
    expect(rows.some((r) => r.endpoint_id === a.webhook_id)).toBe(true)
    expect(errors).toEqual([])
  }, SLOW)

  it('retries a receiver that fails twice with the same webhook-id, and stops after its one success', async () => {
    await freshData()
    const server = await startServer()
    const lab = await tenant(server.app)
    const path = `/flaky-${kind}`
    await endpoint(server.app, lab.name, path)
    receiver.answer.status = (nth, p) => (p === path && nth <= 2 ? 500 : 200)

    const runId = await evalRun(server.url, lab.key)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)
    await until('first attempt recorded', async () => (await deliveryRows(server.app, runId))[0]?.last_status === 500)
    const [pending] = await deliveryRows(server.app, runId)
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP 500: receiver says no' })
    // The first retry is due within a minute (10 s, give or take 20%).
    expect(new Date(pending!.next_attempt_at).getTime() - new Date(pending!.last_attempt_at!).getTime()).toBeLessThan(60_000)
    await settle()
    expect(to(path)).toHaveLength(1)

    offset += 13_000
    await until('second attempt recorded', async () => (await deliveryRows(server.app, runId))[0]?.attempts === 2 && to(path).length === 2)
    offset += 37_000
    await until('third attempt', async () => (await deliveryRows(server.app, runId))[0]?.status === 'delivered')
    offset += 24 * 3600_000
    await settle()

    const calls = to(path)
    expect(calls.map((c) => c.answered)).toEqual([500, 500, 200])
    expect(calls.every((c) => c.verified)).toBe(true)
    expect(new Set(calls.map((c) => c.id)).size).toBe(1)
    expect(new Set(calls.map((c) => c.raw)).size).toBe(1)
    expect(new Set(calls.map((c) => c.headers['webhook-timestamp'])).size).toBe(3)
    expect((await deliveryRows(server.app, runId))[0]).toMatchObject({ status: 'delivered', attempts: 3, last_status: 200, last_error: null })
    receiver.answer.status = () => 200
  }, SLOW)

  it('records an answer whose body holds a NUL byte, and keeps to the backoff', async () => {
    await freshData()
    const server = await startServer()
    const lab = await tenant(server.app)
    const path = `/nul-${kind}`
    await endpoint(server.app, lab.name, path)
    receiver.answer.status = (_nth, p) => (p === path ? 500 : 200)
    receiver.answer.body = (p) => (p === path ? Buffer.from('no\u0000 \xff bad', 'latin1') : undefined)
    try {
      const runId = await evalRun(server.url, lab.key)
      expect((await finalize(server.url, lab.key, runId)).status).toBe(200)
      // PostgreSQL's text refuses NUL: unrecorded, the attempt was re-sent at each lease's end.
      await until('the attempt recorded', async () => (await deliveryRows(server.app, runId))[0]?.last_status === 500)
      const [row] = await deliveryRows(server.app, runId)
      expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP 500: no\ufffd \ufffd bad' })
      expect(new Date(row!.next_attempt_at).getTime() - new Date(row!.last_attempt_at!).getTime()).toBeLessThan(60_000)
      expect(errors).toEqual([])
    } finally {
      receiver.answer.status = () => 200
      receiver.answer.body = () => undefined
    }
  }, SLOW)

  it('delivers a pending retry after the server restarts', async () => {
    await freshData()
    let server = await startServer()
    const lab = await tenant(server.app)
    const path = `/restart-${kind}`
    await endpoint(server.app, lab.name, path)
    receiver.answer.status = (nth, p) => (p === path && nth === 1 ? 503 : 200)

    const runId = await evalRun(server.url, lab.key)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)
    await until('first attempt recorded', async () => (await deliveryRows(server.app, runId))[0]?.last_status === 503)
    await server.close()

    offset += 13_000
    server = await startServer()
    await until('retry after restart', async () => (await deliveryRows(server.app, runId))[0]?.status === 'delivered')
    const calls = to(path)
    expect(calls.map((c) => c.answered)).toEqual([503, 200])
    expect(calls[0]!.id).toBe(calls[1]!.id)
    expect(calls.every((c) => c.verified)).toBe(true)
    receiver.answer.status = () => 200
  }, SLOW)

  it('a server shutting down mid-attempt leaves the delivery due at once, and the next one sends it', async () => {
    await freshData()
    let server = await startServer()
    const lab = await tenant(server.app)
    const path = `/shutdown-${kind}`
    await endpoint(server.app, lab.name, path)
    receiver.answer.hang = (nth, p) => p === path && nth === 1

    const runId = await evalRun(server.url, lab.key)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)
    await until('first attempt under way', () => to(path).length === 1)
    await server.close()

    // The attempt was interrupted (not waited out to its 15 s timeout) and is due again at once.
    server = await startServer(false)
    const [left] = await deliveryRows(server.app, runId)
    expect(left).toMatchObject({ status: 'pending', attempts: 1, last_error: 'interrupted: the sending instance stopped', lease_token: null })
    expect(new Date(left!.next_attempt_at).getTime()).toBeLessThanOrEqual(clock.now().getTime())
    expect(await deliverWebhooks({ db: server.app.deps.db, clock, fetch })).toMatchObject({ attempted: 1, delivered: 1 })
    const calls = to(path)
    expect(calls).toHaveLength(2)
    expect(calls[1]!.id).toBe(calls[0]!.id)
    expect(calls.every((c) => c.verified)).toBe(true)
    expect((await deliveryRows(server.app, runId))[0]).toMatchObject({ attempts: 2, last_status: 200 })
    receiver.answer.hang = () => false
  }, SLOW)

  it('retries an attempt whose instance stopped answering once its lease lapses, and counts its outcome once', async () => {
    await freshData()
    const server = await startServer(false)
    const db = server.app.deps.db
    const lab = await tenant(server.app)
    const path = `/lease-${kind}`
    await endpoint(server.app, lab.name, path)
    const runId = await evalRun(server.url, lab.key)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)

    // An instance that claims the delivery and then hears nothing back.
    const stuck = deliverWebhooks({
      db,
      clock,
      timeoutMs: 3000,
      fetch: (_url, init) => new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new Error('aborted')))),
    })
    await until('claimed', async () => (await deliveryRows(server.app, runId))[0]?.lease_token !== null)
    // Meanwhile another instance finds nothing due: the row is leased.
    expect((await deliverWebhooks({ db, clock, fetch })).attempted).toBe(0)
    // After the lease (timeout + 30 s) another instance retries it.
    const later = { now: () => new Date(Date.now() + 40_000) }
    expect(await deliverWebhooks({ db, clock: later, fetch })).toMatchObject({ attempted: 1, delivered: 1 })
    expect(await stuck).toMatchObject({ attempted: 1, retrying: 1 })
    // The stuck instance's late failure does not undo the success.
    expect((await deliveryRows(server.app, runId))[0]).toMatchObject({ status: 'delivered', attempts: 2, last_status: 200 })
    expect(to(path)).toHaveLength(1)
    expect(to(path)[0]!.verified).toBe(true)
  }, SLOW)

  it('schedules each retry with the random draw it is given (jitter), within the 20% band', async () => {
    await freshData()
    const server = await startServer(false)
    const db = server.app.deps.db
    const lab = await tenant(server.app)
    await endpoint(server.app, lab.name, `/jitter-${kind}`)
    const runId = await evalRun(server.url, lab.key)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)
    const failing = () => Promise.resolve(new Response('no', { status: 500 }))
    const draws = (byte: number) => ({ bytes: (n: number) => new Uint8Array(n).fill(byte), uuid: () => crypto.randomUUID() })
    const waits: number[] = []
    for (const byte of [0x00, 0xff]) {
      const now = new Date(clock.now().getTime() + waits.length * 60_000) // past the previous retry's due time
      expect(await deliverWebhooks({ db, clock: { now: () => now }, fetch: failing, random: draws(byte) })).toMatchObject({ attempted: 1, retrying: 1 })
      const [row] = await deliveryRows(server.app, runId)
      waits.push(new Date(row!.next_attempt_at).getTime() - now.getTime())
    }
    // Attempt 1 with the lowest draw: 10 s - 20%; attempt 2 with the highest: 30 s + 20% (just under).
    expect(waits[0]).toBe(8_000)
    expect(waits[1]).toBeGreaterThan(35_990)
    expect(waits[1]).toBeLessThanOrEqual(36_000)
  }, SLOW)

  it('says when a batch was full (the limit as used, not as given); a secret that cannot sign fails only its own attempt', async () => {
    await freshData()
    const server = await startServer(false)
    const db = server.app.deps.db
    const lab = await tenant(server.app)
    const added = []
    for (const i of [0, 1, 2]) added.push(await endpoint(server.app, lab.name, `/more-${kind}-${i}`))
    await db.updateTable('webhook_endpoints').set({ secret: 'damaged' }).where('id', '=', added[0]!.webhook_id).execute()
    const runId = await evalRun(server.url, lab.key)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)
    const ok = () => Promise.resolve(new Response(null, { status: 204 }))
    // A limit of 2.5 is used as 2: the loop that compared with the limit given never saw a full batch.
    const first = await deliverWebhooks({ db, clock, fetch: ok, limit: 2.5 })
    expect(first).toMatchObject({ attempted: 2, more: true })
    const second = await deliverWebhooks({ db, clock, fetch: ok, limit: 2.5 })
    expect(second).toMatchObject({ attempted: 1, more: false })
    expect(first.delivered + second.delivered).toBe(2)
    expect(first.retrying + second.retrying).toBe(1)
    const rows = await deliveryRows(server.app, runId)
    expect(rows.filter((row) => row.status === 'delivered')).toHaveLength(2)
    expect(rows.find((row) => row.status === 'pending')).toMatchObject({
      attempts: 1,
      last_error: 'cannot sign: a webhook secret starts with whsec_',
      lease_token: null,
    })
  }, SLOW)

  it('a stop signal interrupts every attempt of a large batch, with one listener on the signal', async () => {
    await freshData()
    const server = await startServer(false)
    const lab = await tenant(server.app)
    const paths = Array.from({ length: 12 }, (_, i) => `/batch-${kind}-${i}`)
    for (const path of paths) await endpoint(server.app, lab.name, path)
    const runId = await evalRun(server.url, lab.key)
    expect((await finalize(server.url, lab.key, runId)).status).toBe(200)

    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const stop = new AbortController()
      let started = 0
      const batch = deliverWebhooks({
        db: server.app.deps.db,
        clock,
        limit: 50,
        signal: stop.signal,
        fetch: (_url, init) => {
          started++
          return new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new Error('aborted'))))
        },
      })
      await until('all twelve attempts under way', () => started === 12)
      stop.abort()
      expect(await batch).toEqual({ attempted: 12, delivered: 0, retrying: 12, failed: 0, more: false })
      // Node reports a possible leak (asynchronously) past ten listeners on one signal.
      await new Promise((r) => setTimeout(r, 50))
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
    const rows = await deliveryRows(server.app, runId)
    expect(rows).toHaveLength(12)
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'interrupted: the sending instance stopped', lease_token: null })
    }
  }, SLOW)

  it('sends each delivery once when several instances deliver from one database', async () => {
    await freshData()
    const a = await startServer()
    // PostgreSQL: a second server on the same database. PGlite has one
    // process per data folder: a second delivery loop on the same database.
    const b = temp ? await startServer() : (() => {
      const loop = startWebhookDelivery({ db: a.app.deps.db, clock, fetch, intervalMs: 20, limit: 3 })
      const handle = { close: () => loop.stop() }
      running.push(handle)
      return handle
    })()
    const bUrl = 'url' in b ? (b as { url: string }).url : a.url
    const lab = await tenant(a.app)
    const paths = [1, 2, 3].map((n) => `/many-${kind}-${n}`)
    for (const path of paths) await endpoint(a.app, lab.name, path)
    receiver.answer.delayMs = 30

    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => evalRun(i % 2 ? bUrl : a.url, lab.key, `run-${i}`)))
    const finals = await Promise.all(runs.map((id, i) => finalize(i % 2 ? a.url : bUrl, lab.key, id)))
    expect(finals.map((f) => f.status)).toEqual(runs.map(() => 200))
    const mine = () => receiver.received.filter((r) => paths.includes(r.path))
    await until('all deliveries', () => mine().length >= runs.length * paths.length)
    await settle(800)
    receiver.answer.delayMs = 0

    const ids = mine().map((r) => r.id)
    expect(ids).toHaveLength(runs.length * paths.length)
    expect(new Set(ids).size).toBe(ids.length)
    expect(mine().every((r) => r.verified && r.answered === 200)).toBe(true)
    const counted = await a.app.deps.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('eval_run_id', 'in', runs).execute()
    expect(counted).toHaveLength(runs.length * paths.length)
    expect(counted.every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true)
  }, SLOW)
})
