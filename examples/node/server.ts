/**
 * Embedding episodic in an existing Node HTTP server: the host keeps its own
 * routes and hands everything under /episodic to the episodic handler
 * (PostgreSQL from DATABASE_URL or the embedded database; S3/R2 or the
 * built-in store, whose signed URLs then also live under /episodic).
 *
 *   PORT=3000 npx tsx server.ts
 */
import { createServer } from 'node:http'
import { readConfig } from 'episodic'
import { createNodeApp, nodeListener } from 'episodic/node'

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 3000)
const prefix = '/episodic'

// The service must know its public address to sign upload URLs under the prefix.
const config = readConfig({ EPISODIC_PUBLIC_URL: `http://${host}:${port}${prefix}`, ...process.env })
const { app, close } = await createNodeApp(config)
const episodic = nodeListener(app, { prefix })

const server = createServer((req, res) => {
  const path = req.url ?? '/'
  if (path === prefix || path.startsWith(`${prefix}/`)) return void episodic(req, res)
  // The existing application's own routes.
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('the existing application\n')
    return
  }
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
})

server.listen(port, host, () => console.log(`listening on http://${host}:${port} (episodic under ${prefix})`))

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => void close().then(() => process.exit(0))))
}
