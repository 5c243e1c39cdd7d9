/**
 * The episodic service on Deno: configuration from the environment (see
 * .env.example), PostgreSQL or the embedded database, S3/R2 or the built-in
 * store.
 *
 *   deno run -A --env-file=.env server.ts
 *
 * In your project, map the package in deno.json, from JSR or npm:
 *   "imports": { "episodic": "jsr:@episodic/episodic@^0.2", "episodic/": "jsr:/@episodic/episodic@^0.2/" }
 *   "imports": { "episodic": "npm:episodic@^0.2", "episodic/": "npm:/episodic@^0.2/" }
 * (this repository's deno.json maps it to the sources).
 */
import { readConfig } from 'episodic'
import { createDenoApp, serveDeno } from 'episodic/deno'

const config = readConfig(Deno.env.toObject())
const { app, close } = await createDenoApp(config)
const server = await serveDeno(app, { port: config.port, host: config.host })
console.log(`episodic listening on ${server.url}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  Deno.addSignalListener(signal, async () => {
    await server.close()
    await close()
    Deno.exit(0)
  })
}
