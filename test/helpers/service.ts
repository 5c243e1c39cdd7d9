/**
 * Starts the service the way users run it (Node adapter, real HTTP on a free
 * port, built-in object store on disk) against PGlite or a throwaway
 * PostgreSQL database, with a clock the test can move. With `listen: false`
 * there is no port: `url` is Hono's default origin and requests go through
 * `app.request`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import type { KyselyPlugin } from 'kysely'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createNodeApp, serveNode } from '../../adapters/node/index.ts'
import { archiveEpisode, createClient, createKey, revokeKey } from '../../src/admin/admin.ts'
import { type EpisodicApp, type EpisodicOptions, internalDeps } from '../../src/app.ts'
import { readConfig } from '../../src/config.ts'
import { openDatabase } from '../../src/db/open.ts'
import { openTestDatabase } from './pglite.ts'
import { createTempDatabase } from './postgres.ts'

export type DatabaseKind = 'pglite' | 'postgres'

export interface TestService {
  url: string
  app: EpisodicApp
  /** The data folder (`EPISODIC_DATA_DIR`); the built-in store keeps objects in `objects/` under it. */
  dataDir: string
  /** Moves the service's clock (milliseconds added to real time). */
  advance(ms: number): void
  /** Creates a client with one key and returns the key. */
  newTenant(name?: string): Promise<{ clientId: string; key: string; keyId: string }>
  /** Revokes a key the way an operator would, and returns once the server has heard of it. */
  revoke(tenant: { key: string; keyId: string }): Promise<void>
  archive(episodeId: string): Promise<void>
  errors: unknown[]
  close(): Promise<void>
}

export async function startService(
  kind: DatabaseKind,
  options: { env?: Record<string, string>; overrides?: Partial<EpisodicOptions>; plugins?: KyselyPlugin[]; listen?: boolean } = {},
): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'episodic-test-'))
  const temp = kind === 'postgres' ? await createTempDatabase() : undefined
  // Plugins (a query counter, say) see every query the app sends.
  const opened = temp ? await openDatabase({ url: temp.url }) : await openTestDatabase()
  const db = (options.plugins ?? []).reduce((d, plugin) => d.withPlugin(plugin), opened)
  let offset = 0
  const errors: unknown[] = []
  const clock = { now: () => new Date(Date.now() + offset) }
  const config = readConfig({ EPISODIC_DATA_DIR: dataDir, ...(temp ? { DATABASE_URL: temp.url } : {}), ...options.env })
  const { app, close } = await createNodeApp(config, {
    db,
    clock,
    logger: { error: (_message, error) => errors.push(error) },
    ...options.overrides,
  })
  const server = options.listen === false ? undefined : await serveNode(app, { port: 0 })
  const url = server?.url ?? 'http://localhost'
  const fetchHere = (input: string, init?: RequestInit) => (server ? fetch(input, init) : Promise.resolve(app.request(input, init)))
  let n = 0
  return {
    url,
    app,
    dataDir,
    errors,
    advance: (ms) => (offset += ms),
    async newTenant(name = `tenant-${++n}-${Math.random().toString(36).slice(2, 6)}`) {
      const client = await createClient(app.deps, name)
      const key = await createKey(app.deps, name)
      return { clientId: client.id, key: key.key, keyId: key.key_id }
    },
    async revoke({ key, keyId }) {
      if (kind === 'pglite') {
        // As `episodic keys revoke` does through the control socket.
        await revokeKey(app.deps, keyId)
        internalDeps(app).auth.forget(keyId)
        return
      }
      // As a CLI on another machine does: its own connection, then NOTIFY.
      const other = await openDatabase({ url: temp!.url, max: 1, skipMigrations: true })
      await revokeKey({ db: other, sha256: app.deps.sha256 }, keyId)
      await other.destroy()
      await waitForRevocation(url, key, fetchHere)
    },
    async archive(id) {
      await archiveEpisode(app.deps, id)
    },
    async close() {
      await server?.close()
      await close()
      await temp?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Waits until the server refuses the key: the NOTIFY from another connection
 * arrives asynchronously. Gives up after 10 s (the caller's assertions then fail).
 */
async function waitForRevocation(url: string, key: string, fetchHere: (input: string, init?: RequestInit) => Promise<Response>): Promise<void> {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const reply = await fetchHere(`${url}/api/episodes?limit=1`, { headers: { authorization: `Bearer ${key}` } })
    await reply.body?.cancel()
    if (reply.status === 401) return
    await new Promise((r) => setTimeout(r, 20))
  }
}
