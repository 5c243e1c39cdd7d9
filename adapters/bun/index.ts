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
 *
 * @module
 */
import { listenUrl } from '../../src/http/listen-url.ts'
import { createNodeApp, type RunningServer } from '../node/index.ts'

export type { NodeApp as BunApp, RunningServer } from '../node/index.ts'

/** Opens the database and storage the config names and builds the app (the Node adapter's factory). */
export const createBunApp: typeof createNodeApp = createNodeApp

/**
 * Largest request body Bun lets through to the app (its default is 128
 * MiB): none that matters, so the core answers every size itself, as on
 * the other runtimes: a single PUT declared over 5 GiB gets S3's `400
 * EntityTooLarge` XML (with Bun's own limit at 5 GiB it got a bare 413), a
 * part over 5 GiB likewise, a JSON body over 1 MiB `413` with a JSON error.
 */
export const BUN_MAX_REQUEST_BODY: number = Number.MAX_SAFE_INTEGER

/** What this module uses of the `Bun` global. */
interface BunServeApi {
  serve(options: {
    port: number
    hostname: string
    maxRequestBodySize: number
    fetch(request: Request, server: { requestIP(request: Request): { address: string } | null }): Response | Promise<Response>
  }): { port: number; stop(closeActiveConnections?: boolean): Promise<void> | void }
}

/**
 * Serves the app with `Bun.serve` on `host:port` (port 0 picks a free one);
 * resolves once listening.
 */
// Async although Bun.serve is synchronous: serveNode and serveDeno wait for
// the socket, and the three are interchangeable.
// deno-lint-ignore require-await
export async function serveBun(
  app: { fetch: (request: Request, env?: unknown) => Response | Promise<Response> },
  options: { port?: number; host?: string } = {},
): Promise<RunningServer> {
  const bun = (globalThis as unknown as { Bun?: BunServeApi }).Bun
  if (!bun) throw new Error('serveBun needs the Bun runtime')
  const host = options.host ?? '127.0.0.1'
  const server = bun.serve({
    port: options.port ?? 8787,
    hostname: host,
    maxRequestBodySize: BUN_MAX_REQUEST_BODY,
    // The peer address for the sign-in limit (see the Node adapter's socketAddress).
    fetch: (request, server) => app.fetch(request, { remoteAddress: server.requestIP(request)?.address }),
  })
  return { url: listenUrl(host, server.port), close: async () => void (await server.stop(true)) }
}
