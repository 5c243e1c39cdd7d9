/**
 * Bun adapter. Bun implements the node:* modules the Node adapter builds on
 * and runs postgres.js and PGlite, so the app is built exactly as on Node;
 * this module adds only serving with `Bun.serve`.
 *
 * @example
 * import { readConfig } from 'episodic'
 * import { createBunApp, serveBun } from 'episodic/bun'
 * const config = readConfig(process.env)
 * const { app } = await createBunApp(config)
 * const server = await serveBun(app, { port: config.port, host: config.host })
 */
import type { EpisodicApp } from '../../src/app.ts'
import { createNodeApp, type RunningServer } from '../node/index.ts'

export type { NodeApp as BunApp, RunningServer } from '../node/index.ts'

/** Opens the database and storage the config names and builds the app (the Node adapter's factory, presigning on the main thread). */
export const createBunApp: typeof createNodeApp = (config, overrides, options) => createNodeApp(config, overrides, { presignThread: false, ...options })

/**
 * Largest request body Bun accepts (its default is 128 MiB): 5 GiB, S3's
 * limit for one PUT, so built-in store uploads of long videos get through.
 * JSON bodies keep the core's own 1 MiB limit.
 */
export const BUN_MAX_REQUEST_BODY: number = 5 * 1024 ** 3

/** What this module uses of the `Bun` global. */
interface BunServeApi {
  serve(options: {
    port: number
    hostname: string
    maxRequestBodySize: number
    fetch(request: Request): Response | Promise<Response>
  }): { port: number; stop(closeActiveConnections?: boolean): Promise<void> | void }
}

/**
 * Serves the app with `Bun.serve` on `host:port` (port 0 picks a free one);
 * resolves once listening.
 */
export async function serveBun(app: { fetch: EpisodicApp['fetch'] }, options: { port?: number; host?: string } = {}): Promise<RunningServer> {
  const bun = (globalThis as unknown as { Bun?: BunServeApi }).Bun
  if (!bun) throw new Error('serveBun needs the Bun runtime')
  const host = options.host ?? '127.0.0.1'
  const server = bun.serve({
    port: options.port ?? 8787,
    hostname: host,
    maxRequestBodySize: BUN_MAX_REQUEST_BODY,
    fetch: (request) => app.fetch(request),
  })
  const shown = host.includes(':') ? `[${host}]` : host
  return { url: `http://${shown}:${server.port}`, close: async () => void (await server.stop(true)) }
}
