/** @jsxImportSource hono/jsx */
/**
 * The portal: server-rendered pages for a client's episodes and eval runs,
 * mounted by `createApp` at `/portal` and served by the same fetch handler on
 * every runtime.
 *
 * | path | page |
 * |---|---|
 * | `/portal` | redirects to the episode list |
 * | `/portal/login`, `/portal/logout` | sign in with an API key (GET form, POST), sign out (POST) |
 * | `/portal/episodes`, `/portal/episodes/:id` | episode list with filters; one episode |
 * | `/portal/eval-runs`, `/portal/eval-runs/:id` | eval-run list; one run (the link `episodic replay run` prints) |
 * | `/portal/eval-runs/:id/results/:baseline` | one result: baseline and candidate actions side by side |
 * | `/portal/trends` | rollup metrics with their intervals across eval runs |
 * | `/portal/webhooks` | the client's webhook endpoints and their recent deliveries |
 *
 * Every page but sign-in needs a session; errors render as pages (another
 * client's objects are "not found", exactly as in the API).
 */
import { Hono } from 'hono'
import { compress } from 'hono/compress'
import type { Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { episodePages } from './episodes.tsx'
import { evalRunPages } from './eval-runs.tsx'
import { replayDetailPages } from './replay-detail.tsx'
import { trendPages } from './trends.tsx'
import { type PortalEnv, requireSession } from './guard.ts'
import { MessagePage, sendPage } from './layout.tsx'
import { loginRoutes } from './login.tsx'
import { rootPath } from './root.ts'
import { STYLESHEET } from './style.ts'
import { PLOTS_JS, UPLOT_CSS } from './assets/plots.generated.ts'
import { webhookPages } from './webhooks.tsx'

export function portalRoutes(deps: Deps) {
  const app = new Hono<PortalEnv>()
  const root = rootPath(deps.baseUrl)
  app.use('*', async (c, next) => {
    c.set('root', root)
    await next()
  })
  // Pages are mostly HTML tables (a 500-episode run's page is ~480 KB) and the plots' script is large:
  // gzip when the browser asks (CompressionStream is a Web API on every runtime here).
  app.use('*', compress())

  app.onError((error, c) => {
    const signedIn = c.get('session') !== undefined
    if (error instanceof EpisodicError && error.code === 'not_found') {
      return sendPage(c, 404, <MessagePage title='Not found' message='There is nothing here, or it belongs to another client.' signedIn={signedIn} />)
    }
    if (error instanceof EpisodicError && (error.code === 'invalid' || error.code === 'too_large')) {
      return sendPage(c, 400, <MessagePage title='Bad request' message={error.message} signedIn={signedIn} />)
    }
    if (error instanceof EpisodicError && error.code === 'rate_limited') {
      for (const [name, value] of Object.entries(error.headers)) c.header(name, value)
      c.header('retry-after', String(error.retryAfterSeconds ?? 60))
      return sendPage(c, 429, <MessagePage title='Too many tries' message={`${error.message}.`} signedIn={signedIn} />)
    }
    deps.logger.error(`${c.req.method} ${new URL(c.req.url).pathname} failed`, error instanceof EpisodicError ? (error.cause ?? error) : error)
    return sendPage(c, 500, <MessagePage title='Something went wrong' message='The page could not be loaded. Try again in a moment.' signedIn={signedIn} />)
  })

  app.get('/assets/style.css', (c) => {
    c.header('cache-control', 'public, max-age=300')
    c.header('x-content-type-options', 'nosniff')
    return c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8' })
  })
  // The plots' script and uPlot's stylesheet (built into a module of strings: no file access, no CDN).
  app.get('/assets/plots.js', (c) => {
    c.header('cache-control', 'public, max-age=300')
    c.header('x-content-type-options', 'nosniff')
    return c.body(PLOTS_JS, 200, { 'content-type': 'text/javascript; charset=utf-8' })
  })
  app.get('/assets/uplot.css', (c) => {
    c.header('cache-control', 'public, max-age=300')
    c.header('x-content-type-options', 'nosniff')
    return c.body(UPLOT_CSS, 200, { 'content-type': 'text/css; charset=utf-8' })
  })
  app.get('/', (c) => c.redirect(`${root}/portal/episodes`, 302))
  app.route('/', loginRoutes(deps))

  app.use('*', requireSession(deps))
  app.route('/episodes', episodePages(deps))
  app.route('/', replayDetailPages(deps))
  app.route('/eval-runs', evalRunPages(deps))
  app.route('/trends', trendPages(deps))
  app.route('/webhooks', webhookPages(deps))
  app.all('*', (c) => {
    const path = new URL(c.req.url).pathname
    if (c.req.method === 'GET' && path.length > 1 && path.endsWith('/')) return c.redirect(root + path.replace(/\/+$/, ''), 302)
    throw new EpisodicError('not_found', 'not found')
  })
  return app
}
