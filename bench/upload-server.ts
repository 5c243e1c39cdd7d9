/**
 * The service as `episodic serve` runs it on the embedded database and the
 * built-in store, in its own process so bench/upload.ts can watch its memory.
 * Prints one JSON line: its URL and an API key.
 */
import { createNodeApp, serveNode } from '../adapters/node/index.ts'
import { createClient, createKey } from '../src/admin/admin.ts'
import { readConfig } from '../src/config.ts'

const { app } = await createNodeApp(readConfig(process.env))
await createClient(app.deps, 'bench')
const { key } = await createKey(app.deps, 'bench')
const server = await serveNode(app, { port: 0 })
console.log(JSON.stringify({ url: server.url, key }))
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0))
