/**
 * PostgreSQL going away (issue 16): a private cluster (see test/helpers/private-postgres.ts) is
 * stopped, crashed and restarted while clients open and finalize episodes.
 * Every acknowledged write must be there afterwards, no request may wait
 * more than 10 s, and failures are plain 500s. Also: `episodic serve`
 * started while PostgreSQL is down. Written against the public
 * `createNodeApp`/`openDatabase` API so it holds for any driver.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createNodeApp, type NodeApp, type RunningServer, serveNode } from '../../adapters/node/index.ts'
import { createClient, createKey } from '../../src/admin/admin.ts'
import { readConfig } from '../../src/config.ts'
import { openDatabase } from '../../src/db/open.ts'
import { builtCli } from '../helpers/cli.ts'
import { runCli } from './cli-helpers.ts'
import { createPrivateCluster, describeWithPrivateCluster, type PrivateCluster } from '../helpers/private-postgres.ts'

/** Longest any request may take while PostgreSQL is away. */
const MAX_WAIT_MS = 10_000

interface Sample {
  op: 'open' | 'finalize'
  ms: number
  status: number | string
}

describeWithPrivateCluster('PostgreSQL stopped, crashed and restarted', () => {
  let cluster: PrivateCluster
  let node: NodeApp
  let server: RunningServer
  let key: string
  let dataDir: string
  const logged: unknown[] = []

  beforeAll(async () => {
    await builtCli() // the serve-without-PostgreSQL case spawns the built bin
    cluster = await createPrivateCluster()
    dataDir = mkdtempSync(join(tmpdir(), 'episodic-faults-'))
    const config = readConfig({ DATABASE_URL: cluster.url, EPISODIC_DATA_DIR: dataDir, EPISODIC_STORAGE: 'none' })
    node = await createNodeApp(config, { logger: { error: (_m, e) => void logged.push(e) } })
    server = await serveNode(node.app, { port: 0 })
    await createClient(node.app.deps, 'load')
    key = (await createKey(node.app.deps, 'load')).key
  }, 240_000)

  afterAll(async () => {
    await server?.close()
    await node?.close().catch(() => {})
    await cluster?.destroy()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }, 120_000)

  async function timed(op: Sample['op'], url: string, body: string, samples: Sample[]): Promise<{ status: number | string; json?: any }> {
    const started = Date.now()
    let status: number | string
    let json: any
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
        // Far past the bound, so a hang shows up as a long sample instead of hanging the suite.
        signal: AbortSignal.timeout(60_000),
      })
      status = response.status
      json = await response.json().catch(() => undefined)
    } catch (error) {
      status = `${(error as Error).name}: ${(error as Error).message}`
    }
    samples.push({ op, ms: Date.now() - started, status })
    return { status, json }
  }

  /** Opens and finalizes episodes on `workers` loops until `until()` is true; returns what was acknowledged. */
  async function load(workers: number, until: () => boolean, samples: Sample[]) {
    const opened: string[] = []
    const finalized: string[] = []
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        for (let i = 0; !until(); i++) {
          const open = await timed(
            'open',
            `${server.url}/api/ingest/episode`,
            JSON.stringify({ name: `w${w}-${i}`, request_uploads: [], metadata: { w, i } }),
            samples,
          )
          if (open.status !== 201) {
            await new Promise((r) => setTimeout(r, 50))
            continue
          }
          const id = open.json.episode_id as string
          opened.push(id)
          const done = await timed(
            'finalize',
            `${server.url}/api/ingest/episode/${id}/finalize`,
            JSON.stringify({ duration_s: 1, metadata: { finalized: true } }),
            samples,
          )
          if (done.status === 200) finalized.push(id)
        }
      }),
    )
    return { opened, finalized }
  }

  async function untilServing(deadlineMs: number): Promise<void> {
    const deadline = Date.now() + deadlineMs
    for (;;) {
      const reply = await fetch(`${server.url}/api/episodes?limit=1`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined)
      await reply?.body?.cancel()
      if (reply?.status === 200) return
      if (Date.now() > deadline) throw new Error('the service did not recover after PostgreSQL came back')
      await new Promise((r) => setTimeout(r, 200))
    }
  }

  it.each(['fast', 'immediate'] as const)('stopped (%s) and started under load: fast 500s, no acknowledged write lost', async (mode) => {
    const samples: Sample[] = []
    let stopLoad = false
    const loading = load(4, () => stopLoad, samples)
    await new Promise((r) => setTimeout(r, 1500))
    await cluster.stop(mode)
    const down = Date.now()
    await new Promise((r) => setTimeout(r, 4000))
    await cluster.start()
    const up = Date.now()
    await untilServing(60_000)
    await new Promise((r) => setTimeout(r, 1500))
    stopLoad = true
    const { opened, finalized } = await loading

    const slowest = samples.reduce((max, s) => Math.max(max, s.ms), 0)
    const statuses = [...new Set(samples.map((s) => s.status))]
    const summary = `${mode}: ${samples.length} requests, ${opened.length} opens and ${finalized.length} finalizes acknowledged, statuses ${
      statuses.join(', ')
    }, slowest ${slowest} ms, PostgreSQL down ${up - down} ms`
    console.log(summary)
    expect(opened.length).toBeGreaterThan(0)
    expect(statuses.every((s) => s === 200 || s === 201 || s === 500), summary).toBe(true)
    expect(slowest, summary).toBeLessThan(MAX_WAIT_MS)

    // Every acknowledged write is there.
    for (const id of opened) {
      const reply = await fetch(`${server.url}/api/episodes/${id}`, { headers: { authorization: `Bearer ${key}` } })
      expect(reply.status, id).toBe(200)
      const episode = await reply.json()
      if (finalized.includes(id)) expect(episode, id).toMatchObject({ status: 'ready', duration_s: 1, metadata: { finalized: true } })
    }
  }, 300_000)

  it('sessions killed under load: fast 500s, no acknowledged write lost', async () => {
    const samples: Sample[] = []
    let stopLoad = false
    const loading = load(4, () => stopLoad, samples)
    const admin = await openDatabase({ url: cluster.url, max: 1, skipMigrations: true })
    try {
      for (let round = 0; round < 5; round++) {
        await new Promise((r) => setTimeout(r, 700))
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`
          .execute(admin)
      }
    } finally {
      await admin.destroy()
    }
    await untilServing(60_000)
    stopLoad = true
    const { opened, finalized } = await loading
    const slowest = samples.reduce((max, s) => Math.max(max, s.ms), 0)
    const statuses = [...new Set(samples.map((s) => s.status))]
    const summary = `sessions killed: ${samples.length} requests, ${opened.length} opens and ${finalized.length} finalizes acknowledged, statuses ${
      statuses.join(', ')
    }, slowest ${slowest} ms`
    console.log(summary)
    expect(statuses.every((s) => s === 200 || s === 201 || s === 500), summary).toBe(true)
    expect(slowest, summary).toBeLessThan(MAX_WAIT_MS)
    for (const id of finalized) {
      const reply = await fetch(`${server.url}/api/episodes/${id}`, { headers: { authorization: `Bearer ${key}` } })
      expect(await reply.json(), id).toMatchObject({ status: 'ready', metadata: { finalized: true } })
    }
  }, 300_000)

  it('serve started while PostgreSQL is stopped fails fast with one line', async () => {
    await cluster.stop('fast')
    try {
      const dir = mkdtempSync(join(tmpdir(), 'episodic-nopg-'))
      const result = await runCli(['serve', '--port', '0'], { DATABASE_URL: cluster.url, EPISODIC_DATA_DIR: dir, EPISODIC_STORAGE: 'none' }, 120_000)
      rmSync(dir, { recursive: true, force: true })
      console.log(`serve without PostgreSQL: exit ${result.code} after ${result.ms} ms: ${result.stderr.trim()}`)
      expect(result.code).toBe(5)
      expect(result.ms).toBeLessThan(MAX_WAIT_MS + 20_000) // process start included
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr).toBe(`episodic: cannot reach PostgreSQL at 127.0.0.1:${cluster.port} (DATABASE_URL): ECONNREFUSED; is it running?\n`)
    } finally {
      await cluster.start()
    }
  }, 180_000)
})
