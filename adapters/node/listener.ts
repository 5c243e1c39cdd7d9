/**
 * The app as a Node `(req, res)` listener, to embed it in an existing
 * `node:http` server (or Express, Fastify's raw server, ...), optionally under
 * a path prefix. With a prefix, set `EPISODIC_PUBLIC_URL` (the core's
 * `baseUrl`) to the public address including it, e.g.
 * `https://example.com/episodic`, so the built-in store's signed URLs and the
 * portal's links point under the prefix too.
 *
 * @example
 * const episodic = nodeListener(app, { prefix: '/episodic' })
 * createServer((req, res) => (req.url?.startsWith('/episodic/') ? episodic(req, res) : existing(req, res)))
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { Hono } from 'hono'
import type { EpisodicApp } from '../../src/app.ts'

/** Options of `nodeListener`. */
export interface NodeListenerOptions {
  /** Path the app is mounted under, e.g. `/episodic`; default none (the root). */
  prefix?: string
}

/** A Node request listener serving `app`, under `options.prefix` when given. */
export function nodeListener(app: EpisodicApp, options: NodeListenerOptions = {}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '')
  let handler: { fetch(request: Request): Response | Promise<Response> } = app
  if (prefix) {
    // Routes keep their full path (signed URLs are verified against it);
    // anything unmatched gets the app's own JSON 404.
    const mounted = new Hono().route(prefix, app)
    mounted.notFound((c) => app.fetch(c.req.raw))
    handler = mounted
  }
  return getRequestListener((request) => handler.fetch(request))
}
