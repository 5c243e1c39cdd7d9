/**
 * A frozen PostgreSQL (SIGSTOP on the postmaster and every backend: the
 * sockets stay open, nothing answers, like a half-open peer or a host that
 * vanished) must not hang requests: each answers 500 within 10 s (the pool's
 * deadline: statement timeout 3 s + connect timeout 3 s + 2 s), and the
 * service serves again once PostgreSQL thaws.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createNodeApp, type NodeApp, type RunningServer, serveNode } from '../../adapters/node/index.ts'
import { createClient, createKey } from '../../src/admin/admin.ts'
import { readConfig } from '../../src/config.ts'
import { createPrivateCluster, describeWithPrivateCluster, type PrivateCluster } from '../helpers/private-postgres.ts'

describeWithPrivateCluster('PostgreSQL frozen', () => {
  let cluster: PrivateCluster
  let node: NodeApp
  let server: RunningServer
  let key: string
  let dataDir: string

  beforeAll(async () => {
    cluster = await createPrivateCluster()
    dataDir = mkdtempSync(join(tmpdir(), 'episodic-frozen-'))
    node = await createNodeApp(
      readConfig({
        DATABASE_URL: cluster.url,
        EPISODIC_DATA_DIR: dataDir,
        EPISODIC_STORAGE: 'none',
        DATABASE_CONNECT_TIMEOUT_S: '3',
        DATABASE_STATEMENT_TIMEOUT_MS: '3000',
      }),
      { logger: { error: () => {} } },
    )
    server = await serveNode(node.app, { port: 0 })
    await createClient(node.app.deps, 'frozen')
    key = (await createKey(node.app.deps, 'frozen')).key
  }, 240_000)

  afterAll(async () => {
    await cluster?.signal('SIGCONT')
    await server?.close()
    await node?.close().catch(() => {})
    await cluster?.destroy()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }, 120_000)

  const open = () =>
    fetch(`${server.url}/api/ingest/episode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{"request_uploads": []}',
      signal: AbortSignal.timeout(60_000),
    })

  it('answers 500 within 10 s while frozen, and serves again once thawed', async () => {
    expect((await open()).status).toBe(201)
    await cluster.signal('SIGSTOP')
    const replies = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const started = Date.now()
        const status = await open().then((r) => r.status, (e: Error) => e.name)
        return { status, ms: Date.now() - started }
      }),
    )
    await cluster.signal('SIGCONT')
    for (const reply of replies) {
      expect(reply.status).toBe(500)
      expect(reply.ms).toBeLessThan(10_000)
    }
    const deadline = Date.now() + 60_000
    let status = 0
    while (status !== 201 && Date.now() < deadline) status = await open().then((r) => r.status, () => 0)
    expect(status).toBe(201)
  }, 300_000)
})
