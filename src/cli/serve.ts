/**
 * `episodic serve`: opens the configured database and storage, bootstraps a
 * `default` client on an empty database, listens, and (on the embedded
 * database) opens the control socket for admin verbs.
 */
import { createNodeApp, serveNode } from '../../adapters/node/index.ts'
import { createClient, createKey } from '../admin/admin.ts'
import type { EpisodicConfig } from '../config.ts'
import { adminCall } from './admin.ts'
import { startControl } from './control.ts'
import { configError } from './exit.ts'
import type { EpisodicApp } from '../app.ts'

export async function serveCommand(config: EpisodicConfig, flags: { port?: string; host?: string }): Promise<number> {
  const port = flags.port === undefined ? config.port : Number(flags.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw configError(`--port must be a port number (got "${flags.port}")`)
  const host = flags.host ?? config.host

  const { app, warm, close } = await createNodeApp(config)
  await warm()
  const server = await serveNode(app, { port, host })
  const embedded = !config.databaseUrl
  const control = embedded
    ? await startControl(config.dataDir, server.url, adminCall(app.deps, (keyId) => app.deps.auth.forget(keyId)))
    : undefined

  const where = embedded ? `embedded database in ${config.dataDir}` : 'PostgreSQL'
  const storage = config.storage.kind === 'none' ? 'no object storage' : config.storage.kind === 's3' ? `S3 bucket ${config.storage.s3.bucket}` : 'built-in object store'
  console.log(`episodic listening on ${server.url} (${where}, ${storage})`)
  await bootstrap(app, server.url)

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    control?.close()
    await server.close()
    await close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  return 0
}

/** First start on an empty database: a `default` client and one key, printed once. */
async function bootstrap(app: EpisodicApp, url: string): Promise<void> {
  const deps = app.deps
  const any = await deps.db.selectFrom('clients').select('id').limit(1).executeTakeFirst()
  if (any) return
  await createClient(deps, 'default')
  const { key } = await createKey(deps, 'default')
  console.log(`
First start: created client "default" with this API key (shown once, keep it):

  export EPISODIC_API_KEY=${key}

Open an episode:

  curl -s -X POST ${url}/api/ingest/episode \\
    -H "Authorization: Bearer ${key}" \\
    -H 'Content-Type: application/json' \\
    -d '{"name": "first run", "robot": "arm-1", "request_uploads": ["actions"]}'

The portal (sign in with the same key): ${url}/portal
More keys: npm run episodic -- keys create --client default
`)
}
