/** The service as `episodic serve` runs it, on DATABASE_URL, for bench/ingest.ts. */
import { createNodeApp, serveNode } from '../adapters/node/index.ts'
import { readConfig } from '../src/config.ts'

const { app } = await createNodeApp(readConfig(process.env))
const server = await serveNode(app, { port: 0 })
console.log(`listening on ${server.url}`)
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0))
