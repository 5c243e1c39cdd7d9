/**
 * Node adapter: turns the environment and the local disk into the core's
 * options (database, object storage, node:crypto's SHA-256, files on disk) and
 * serves the fetch handler with @hono/node-server.
 *
 * @example
 * import { readConfig } from 'episodic'
 * import { createNodeApp, serveNode } from 'episodic/node'
 * const { app } = await createNodeApp(readConfig(process.env))
 * const server = await serveNode(app, { port: 8787 })
 *
 * @module
 */
import { serve } from '@hono/node-server'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { setImmediate } from 'node:timers'
import { adminCall } from '../../src/admin/call.ts'
import { createApp, type EpisodicApp, type EpisodicOptions, internalDeps } from '../../src/app.ts'
import { type EpisodicConfig, limitOptions } from '../../src/config.ts'
import type { Database } from '../../src/db/schema.ts'
import { behindProxy, type ClientAddress } from '../../src/http/rate-limit.ts'
import type { Kysely } from 'kysely'
import { postgresRevocations } from '../../src/db/notify.ts'
import { openDatabase } from '../../src/db/open.ts'
import { listenUrl } from '../../src/http/listen-url.ts'
import { createLocalStorage } from '../../src/storage/local.ts'
import { createS3Storage } from '../../src/storage/s3.ts'
import type { ObjectStorage } from '../../src/storage/types.ts'
import { startWebhookDelivery } from '../../src/webhooks/loop.ts'
import { DATA_FOLDER_MODE, dataFolderHolder, DataFolderInUse, type DataLock, lockDataFolder } from './data-lock.ts'
import { startControl } from './control.ts'
import { createDiskFiles } from './files.ts'
import { NodeSha256 } from './sha256.ts'

export { createDiskFiles, dataFolderHolder, DataFolderInUse, type DataLock, lockDataFolder, NodeSha256 }
export { nodeListener, type NodeListenerOptions } from './listener.ts'
export { DiskFile, type NodeUploadTransport, nodeUploadTransport, openDiskFile } from './upload-transport.ts'

/** What `createNodeApp` returns: the app and how to shut it down. */
export interface NodeApp {
  /** The fetch handler and its capabilities; mount `app.fetch` or pass it to `serveNode`. */
  app: EpisodicApp
  /** Stops listening for revocations and closes the database. */
  close(): Promise<void>
}

/** How `createNodeApp` runs what the config names. */
export interface NodeAppOptions {
  /**
   * Send queued webhooks from this process (default true, every
   * `config.webhookIntervalMs`; also off when that is 0). Turn it off for
   * instances that should only serve requests: any one instance sending is enough.
   */
  deliverWebhooks?: boolean
  /**
   * On the embedded database, answer the CLI's admin verbs (`episodic keys
   * create ...`) through a control socket while this process holds the data
   * folder (default true; see control.ts).
   */
  control?: boolean
}

/**
 * Opens the database and storage the config names and builds the app. On
 * the embedded database the data folder is locked for this process first
 * (see `lockDataFolder`): a folder another live process holds throws
 * `DataFolderInUse` before anything is opened.
 */
export async function createNodeApp(config: EpisodicConfig, overrides: Partial<EpisodicOptions> = {}, options: NodeAppOptions = {}): Promise<NodeApp> {
  if (!config.databaseUrl || config.storage.kind === 'local') mkdirSync(config.dataDir, { recursive: true, mode: DATA_FOLDER_MODE })
  const embedded = !overrides.db && !config.databaseUrl
  const lock = embedded ? lockDataFolder(config.dataDir) : undefined
  let db: Kysely<Database>
  try {
    db = overrides.db ??
      (await openDatabase({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : join(config.dataDir, 'db'), ...config.database }))
  } catch (error) {
    lock?.release()
    throw error
  }
  const app = createApp({
    sha256: NodeSha256,
    // One INSERT / UPDATE for the opens and finalizes read in one turn.
    batchWrites: (flush) => void setImmediate(flush),
    authCacheMs: config.authCacheMs,
    baseUrl: config.baseUrl,
    ...limitOptions(config),
    clientAddress: config.trustProxy ? behindProxy(socketAddress) : socketAddress,
    // On PostgreSQL the core keeps the key in the database, shared by every instance; embedded, a file of the folder.
    sessionSecret: config.sessionSecret ?? (config.databaseUrl ? undefined : fileSecret(config.dataDir, 'session.secret')),
    // Other instances on the same PostgreSQL revoke keys too: hear them at once.
    revocations: config.databaseUrl ? postgresRevocations(config.databaseUrl) : undefined,
    ...overrides,
    db,
    storage: overrides.storage === undefined ? nodeStorage(config) : overrides.storage,
  })
  try {
    await app.ready
  } catch (error) {
    // Its start failed (listening for revocations, say): nothing the caller cannot close stays open.
    await app.close().catch(() => {})
    if (!overrides.db) await db.destroy().catch(() => {})
    lock?.release()
    throw error
  }
  // The data folder is this process's: admin verbs reach its database through here.
  // Without it (a temp folder that refuses sockets, say) the server still serves; admin verbs then ask to stop it.
  const control = lock && options.control !== false
    ? await startControl(config.dataDir, adminCall(app.deps, (keyId) => internalDeps(app).auth.forget(keyId))).catch(() => undefined)
    : undefined
  const webhooks = options.deliverWebhooks !== false && config.webhookIntervalMs > 0
    ? startWebhookDelivery({ db, fetch: globalThis.fetch, clock: app.deps.clock, intervalMs: config.webhookIntervalMs, logger: app.deps.logger })
    : undefined
  return {
    app,
    async close() {
      control?.close()
      await webhooks?.stop()
      await app.close()
      await db.destroy()
      lock?.release()
    },
  }
}

/**
 * The peer address of a request served by @hono/node-server (its `env` holds
 * the Node request), or `env.remoteAddress` where the Bun and Deno adapters
 * put it.
 */
export const socketAddress: ClientAddress = (_request: Request, env: unknown): string | undefined => {
  const e = env as { incoming?: { socket?: { remoteAddress?: string } }; remoteAddress?: string } | undefined
  return e?.incoming?.socket?.remoteAddress ?? e?.remoteAddress
}

function nodeStorage(config: EpisodicConfig): ObjectStorage | null {
  const storage = config.storage
  if (storage.kind === 'none') return null
  if (storage.kind === 's3') return createS3Storage({ ...storage.s3, sha256: NodeSha256 })
  const secret = storage.secret ?? fileSecret(config.dataDir, 'storage.secret')
  return createLocalStorage({
    files: createDiskFiles(join(config.dataDir, 'objects')),
    secret,
    sha256: NodeSha256,
    publicBaseUrl: storage.publicBaseUrl,
    quotaBytes: storage.quotaBytes,
  })
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
  mkdirSync(dataDir, { recursive: true, mode: DATA_FOLDER_MODE })
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

/** A server started by `serveNode`, `serveDeno` or `serveBun`. */
export interface RunningServer {
  /** The address it listens on, e.g. `http://127.0.0.1:8787` (the real port when 0 was asked for). */
  url: string
  /** Stops listening and drops open connections; resolves once closed. */
  close(): Promise<void>
}

/** Listens on `host:port` (port 0 picks a free one) and resolves once bound. */
export function serveNode(app: { fetch: EpisodicApp['fetch'] }, options: { port?: number; host?: string } = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1'
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? 8787, hostname: host }, (info: AddressInfo) => {
      resolve({
        url: listenUrl(host, info.port),
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            ;(server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.()
          }),
      })
    })
    server.once('error', reject)
  })
}
