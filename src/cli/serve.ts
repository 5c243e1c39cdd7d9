/**
 * `episodic serve`: opens the configured database and storage, bootstraps a
 * `default` client on an empty database, listens, and (on the embedded
 * database) opens the control socket for admin verbs.
 *
 * Before opening anything it refuses, with one line and exit code 3, a data
 * folder another live server holds and a port that is taken.
 */
import { createServer } from 'node:net'
import { createNodeApp, dataFolderHolder, DataFolderInUse, type NodeApp, type RunningServer, serveNode } from '../../adapters/node/index.ts'
import { createClient, createKey } from '../admin/admin.ts'
import type { EpisodicConfig } from '../config.ts'
import { EpisodicError } from '../errors.ts'
import { usableDataFolder } from './data-folder.ts'
import { out } from './io.ts'
import { CliError, configError, EXIT } from './exit.ts'
import type { EpisodicApp } from '../app.ts'

/** `episodic serve`: `flags` are `--port` (checked by the CLI) and `--host`, over `PORT` and `HOST`. */
export async function serveCommand(config: EpisodicConfig, flags: { port?: number; host?: string }): Promise<number> {
  const port = flags.port ?? config.port
  const host = flags.host ?? config.host
  const embedded = !config.databaseUrl
  if (embedded || config.storage.kind === 'local') usableDataFolder(config.dataDir)
  const holder = embedded ? dataFolderHolder(config.dataDir) : undefined
  if (holder !== undefined) throw configError(new DataFolderInUse(config.dataDir, holder).message)
  await probePort(port, host)

  let node: NodeApp
  try {
    node = await createNodeApp(config)
  } catch (error) {
    if (error instanceof DataFolderInUse) throw configError(error.message)
    throw databaseError(error, config.databaseUrl) ?? error
  }
  const { app, close } = node
  let server: RunningServer
  try {
    server = await serveNode(app, { port, host })
  } catch (error) {
    await close()
    throw listenError(error, port, host) ?? error
  }

  const where = embedded ? `embedded database in ${config.dataDir}` : 'PostgreSQL'
  const storage = config.storage.kind === 'none'
    ? 'no object storage'
    : config.storage.kind === 's3'
    ? `S3 bucket ${config.storage.s3.bucket}`
    : 'built-in object store'
  const webhooks = config.webhookIntervalMs > 0 ? `webhooks sent every ${config.webhookIntervalMs / 1000} s` : 'webhooks not sent by this instance'
  out(`episodic listening on ${server.url} (${where}, ${storage}, ${webhooks})`)
  await bootstrap(app, server.url)

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    await server.close()
    await close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  return 0
}

/** The one-line refusal for a port that cannot be had, or undefined for other errors. */
function listenError(error: unknown, port: number, host: string): Error | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'EADDRINUSE') return configError(`port ${port} is in use; set PORT`)
  if (code === 'EACCES') return configError(`port ${port} needs privileges this user lacks; set PORT`)
  if (code === 'EADDRNOTAVAIL') return configError(`address ${host} is not available on this machine; set HOST`)
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL') {
    return configError(`host ${JSON.stringify(host)} cannot be resolved (${code}); set HOST to an address of this machine`)
  }
  return undefined
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'CONNECT_TIMEOUT', '57P03'])

/** A PostgreSQL that cannot be reached at startup, as one line (exit 5), or undefined. */
function databaseError(error: unknown, databaseUrl: string | undefined): Error | undefined {
  if (!databaseUrl) return undefined
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) {
      let where = 'DATABASE_URL'
      try {
        const url = new URL(databaseUrl)
        where = `${url.hostname}:${url.port || 5432} (DATABASE_URL)`
      } catch {
        // not a URL: name the variable only
      }
      return new CliError(`cannot reach PostgreSQL at ${where}: ${e.code}; is it running?`, EXIT.transport)
    }
  }
  return undefined
}

/** Binds `host:port` once and lets go, so a taken port is reported before anything is opened. */
async function probePort(port: number, host: string): Promise<void> {
  if (port === 0) return
  await new Promise<void>((done, fail) => {
    const probe = createServer()
    probe.once('error', (error) => fail(listenError(error, port, host) ?? error))
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => done()))
  })
}

/**
 * First start on an empty database: a `default` client and one key, printed
 * once. Several instances starting together on one empty PostgreSQL race
 * here: the one whose client insert wins mints the key; the others go on.
 */
export async function bootstrap(app: Pick<EpisodicApp, 'deps'>, url: string): Promise<void> {
  const deps = app.deps
  const any = await deps.db.selectFrom('clients').select('id').limit(1).executeTakeFirst()
  if (any) return
  try {
    await createClient(deps, 'default')
  } catch (error) {
    if (error instanceof EpisodicError && error.code === 'conflict') return // another instance made it a moment ago
    throw error
  }
  const { key } = await createKey(deps, 'default')
  out(firstStartBanner(key, url))
}

/**
 * How a user here runs another verb: the installed package's bin through
 * `npx episodic`, or, when this module runs from the sources (`npm start` in a
 * clone, where npx finds no `episodic` bin), the package script.
 */
export function verbCommand(moduleUrl: string = import.meta.url): string {
  return /\.[cm]?tsx?$/.test(new URL(moduleUrl).pathname) ? 'npm run episodic --' : 'npx episodic'
}

/** What the first start prints: the key, a curl line to copy, the portal, how to mint more keys. */
export function firstStartBanner(key: string, url: string, moduleUrl: string = import.meta.url): string {
  return `
First start: created client "default" with this API key (shown once, keep it):

  export EPISODIC_API_KEY=${key}

Open an episode:

  curl -s -X POST ${url}/api/ingest/episode \\
    -H "Authorization: Bearer ${key}" \\
    -H 'Content-Type: application/json' \\
    -d '{"name": "first run", "robot": "arm-1", "request_uploads": ["actions"]}'

The portal (sign in with the same key): ${url}/portal
More keys: ${verbCommand(moduleUrl)} keys create --client default
`
}
