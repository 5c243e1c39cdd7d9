/**
 * Node adapter: turns the environment and the local disk into the core's
 * options (database, object storage, node:crypto's SHA-256, files on disk) and
 * serves the fetch handler with @hono/node-server.
 *
 * @example
 * import { createNodeApp, serveNode } from 'episodic/node'
 * const { app } = await createNodeApp(readConfig(process.env))
 * const server = await serveNode(app, { port: 8787 })
 */
import { serve } from '@hono/node-server'
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { setImmediate } from 'node:timers'
import type { AddressInfo } from 'node:net'
import { createApp, type EpisodicApp, type EpisodicOptions } from '../../src/app.ts'
import type { EpisodicConfig } from '../../src/config.ts'
import { listenForRevocations } from '../../src/db/notify.ts'
import { openDatabase } from '../../src/db/open.ts'
import type { ObjectStorage } from '../../src/storage/types.ts'
import { createDiskFiles } from './files.ts'
import { presignOnThread, storageFromSpec, type SigningSpec, type ThreadedStorage } from './presign-thread.ts'
import { NodeSha256 } from './sha256.ts'

export { createDiskFiles, NodeSha256, presignOnThread }
export type { PresignThreadOptions, SigningSpec, ThreadedStorage } from './presign-thread.ts'

export interface NodeApp {
  app: EpisodicApp
  /**
   * Starts what would otherwise start with the first request (the presign
   * worker) and resolves once it is up, so that request does not wait ~0.3 s
   * for it and a worker that cannot start is reported at startup. Optional:
   * without it everything starts on demand. Never rejects.
   */
  warm(): Promise<void>
  close(): Promise<void>
}

/** How `createNodeApp` runs what the config names. */
export interface NodeAppOptions {
  /**
   * Presign upload URLs on a worker thread (see `presignOnThread`); default
   * true. The Bun and Deno adapters turn it off: their servers leave the main
   * thread less busy, and their worker threads load modules their own way.
   */
  presignThread?: boolean
}

/** Opens the database and storage the config names and builds the app. */
export async function createNodeApp(config: EpisodicConfig, overrides: Partial<EpisodicOptions> = {}, options: NodeAppOptions = {}): Promise<NodeApp> {
  if (!config.databaseUrl || config.storage.kind === 'local') mkdirSync(config.dataDir, { recursive: true })
  const db = overrides.db ?? (await openDatabase({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : join(config.dataDir, 'db') }))
  // The store the config names is the app's to close; one passed in stays the caller's.
  const ownStorage = overrides.storage === undefined ? nodeStorage(config, options.presignThread ?? true) : null
  const storage = overrides.storage ?? ownStorage
  const app = createApp({
    sha256: NodeSha256,
    // One INSERT / UPDATE for the opens and finalizes read in one turn.
    batchWrites: (flush) => void setImmediate(flush),
    authCacheMs: config.authCacheMs,
    baseUrl: config.baseUrl,
    sessionSecret: overrides.sessionSecret ?? config.sessionSecret ?? fileSecret(config.dataDir, 'session.secret'),
    ...overrides,
    db,
    storage,
  })
  const stopListening = config.databaseUrl && app.deps.auth.caching
    ? await listenForRevocations(config.databaseUrl, (keyId) => app.deps.auth.forget(keyId))
    : undefined
  return {
    app,
    warm: async () => {
      await ownStorage?.warm?.()
    },
    async close() {
      await stopListening?.()
      await ownStorage?.close?.()
      await db.destroy()
    },
  }
}

function nodeStorage(config: EpisodicConfig, onThread: boolean): (ObjectStorage & Partial<Pick<ThreadedStorage, 'warm' | 'close'>>) | null {
  const storage = config.storage
  if (storage.kind === 'none') return null
  const spec: SigningSpec = storage.kind === 's3'
    ? { kind: 's3', s3: storage.s3 }
    : { kind: 'local', secret: storage.secret ?? fileSecret(config.dataDir, 'storage.secret') }
  const store = storageFromSpec(spec, createDiskFiles(join(config.dataDir, 'objects')))
  if (!onThread) return store
  const onWorkerError = (error: unknown) => console.error('episodic: the presign worker failed; signing on the main thread from now on', error)
  return presignOnThread(store, spec, { onWorkerError })
}

/**
 * A signing secret made once per data folder (mode 0600): `storage.secret`
 * for the built-in store, `session.secret` for portal cookies, so sessions
 * survive a restart. Instances sharing PostgreSQL without a shared folder set
 * EPISODIC_SESSION_SECRET instead.
 */
function fileSecret(dataDir: string, name: string): string {
  const file = join(dataDir, name)
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  try {
    writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' })
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim()
    throw error
  }
  return secret
}

export interface RunningServer {
  url: string
  close(): Promise<void>
}

/** Listens on `host:port` (port 0 picks a free one) and resolves once bound. */
export function serveNode(app: { fetch: EpisodicApp['fetch'] }, options: { port?: number; host?: string } = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1'
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? 8787, hostname: host }, (info: AddressInfo) => {
      const shown = host.includes(':') ? `[${host}]` : host
      resolve({
        url: `http://${shown}:${info.port}`,
        close: () => new Promise<void>((done) => {
          server.close(() => done())
          ;(server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.()
        }),
      })
    })
    server.once('error', reject)
  })
}
export { nodeListener, type NodeListenerOptions } from './listener.ts'
