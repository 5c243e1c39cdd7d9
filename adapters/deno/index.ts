/**
 * Deno adapter. Deno implements the node:* modules the Node adapter builds on
 * (node:fs for the data folder and the built-in store's files, node:crypto's
 * hash) and runs postgres.js and PGlite from npm, so the app is built exactly
 * as on Node; this module adds only serving with `Deno.serve`.
 *
 * @example
 * import { readConfig } from 'episodic'
 * import { createDenoApp, serveDeno } from 'episodic/deno'
 * const config = readConfig(Deno.env.toObject())
 * const { app } = await createDenoApp(config)
 * const server = await serveDeno(app, { port: config.port, host: config.host })
 *
 * @module
 */
import { listenUrl } from '../../src/http/listen-url.ts'
import { createNodeApp, type RunningServer } from '../node/index.ts'

export type { NodeApp as DenoApp, RunningServer } from '../node/index.ts'

/** Opens the database and storage the config names and builds the app (the Node adapter's factory). */
export const createDenoApp: typeof createNodeApp = createNodeApp

/** What this module uses of the `Deno` global. */
interface DenoServeApi {
  serve(
    options: { port: number; hostname: string; onListen(address: { hostname: string; port: number }): void },
    handler: (request: Request, info: { remoteAddr: { hostname?: string } }) => Response | Promise<Response>,
  ): { shutdown(): Promise<void>; finished: Promise<void> }
}

/**
 * Serves the app with `Deno.serve` on `host:port` (port 0 picks a free one)
 * and resolves once listening.
 */
export function serveDeno(
  app: { fetch: (request: Request, env?: unknown) => Response | Promise<Response> },
  options: { port?: number; host?: string } = {},
): Promise<RunningServer> {
  const deno = (globalThis as unknown as { Deno?: DenoServeApi }).Deno
  if (!deno) return Promise.reject(new Error('serveDeno needs the Deno runtime'))
  const host = options.host ?? '127.0.0.1'
  return new Promise((resolve) => {
    const server = deno.serve(
      {
        port: options.port ?? 8787,
        hostname: host,
        onListen: ({ port }) => {
          resolve({ url: listenUrl(host, port), close: () => server.shutdown() })
        },
      },
      // The peer address for the sign-in limit (see the Node adapter's socketAddress).
      (request, info) => app.fetch(request, { remoteAddress: info.remoteAddr.hostname }),
    )
  })
}
