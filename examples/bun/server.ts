/**
 * The episodic service on Bun, as deployed: PostgreSQL from DATABASE_URL and
 * artifacts in Cloudflare R2 through its S3 API (see .env.example and the
 * README next to this file). Bun reads .env by itself.
 *
 *   bun run server.ts
 */
import { readConfig } from 'episodic'
import { createBunApp, serveBun } from 'episodic/bun'

const config = readConfig(process.env)
const { app, close } = await createBunApp(config)
const server = await serveBun(app, { port: config.port, host: config.host })
console.log(`episodic listening on ${server.url}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    await server.close()
    await close()
    process.exit(0)
  })
}
