/** @jsxImportSource hono/jsx */
/**
 * The page shell every portal page shares, and the headers that go with it.
 * Pages are plain server-rendered HTML: no script at all, one stylesheet from
 * the same origin, so the Content-Security-Policy can be strict.
 */
import type { Context } from 'hono'
import type { Child } from 'hono/jsx'
import { raw } from 'hono/html'
import { RootPath, useRoot } from './root.ts'

/** Which top-level section a page belongs to (highlighted in the nav). */
export type Section = 'episodes' | 'eval-runs' | 'trends' | 'webhooks' | 'none'

export interface LayoutProps {
  title: string
  section: Section
  /** Shows the sign-out button. */
  signedIn: boolean
  children?: Child
}

/**
 * No scripts, styles only from the stylesheet, forms only to the portal, not
 * framable. Media may come from the object store's origin (the artifact
 * route redirects to a signed URL there).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' https: http:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

export function Layout(props: LayoutProps) {
  const current = (section: Section) => (props.section === section ? { 'aria-current': 'page' } : {})
  const root = useRoot()
  return (
    <>
      {raw('<!doctype html>')}
      <html lang='en'>
        <head>
          <meta charset='utf-8' />
          <meta name='viewport' content='width=device-width, initial-scale=1' />
          <meta name='referrer' content='same-origin' />
          <title>{`${props.title} · episodic`}</title>
          <link rel='stylesheet' href={`${root}/portal/assets/style.css`} />
          {/* No icon of its own: an empty one keeps browsers from asking the host's /favicon.ico (a 404 on every page). */}
          <link rel='icon' href='data:,' />
        </head>
        <body>
          <a class='skip' href='#main'>Skip to content</a>
          <header class='top'>
            <a class='brand' href={`${root}/portal/episodes`}>episodic</a>
            {props.signedIn && (
              <nav>
                <a href={`${root}/portal/episodes`} {...current('episodes')}>Episodes</a>
                <a href={`${root}/portal/eval-runs`} {...current('eval-runs')}>Eval runs</a>
                <a href={`${root}/portal/trends`} {...current('trends')}>Trends</a>
                <a href={`${root}/portal/webhooks`} {...current('webhooks')}>Webhooks</a>
              </nav>
            )}
            {props.signedIn && (
              <form method='post' action={`${root}/portal/logout`}>
                <button type='submit' class='link'>Sign out</button>
              </form>
            )}
          </header>
          <main id='main'>{props.children}</main>
        </body>
      </html>
    </>
  )
}

/**
 * Sends a page with the portal's headers (private, never cached, strict CSP,
 * or the given one: pages with plots allow the portal's script), rendered
 * under the root path the portal's middleware put in `c.var.root`.
 */
export function sendPage(
  c: Context,
  status: 200 | 400 | 401 | 403 | 404 | 429 | 500,
  page: Child,
  csp = CONTENT_SECURITY_POLICY,
): Response | Promise<Response> {
  c.header('content-security-policy', csp)
  c.header('cache-control', 'no-store')
  c.header('x-content-type-options', 'nosniff')
  c.header('x-frame-options', 'DENY')
  c.header('referrer-policy', 'same-origin')
  const root = (c.get('root') as string | undefined) ?? ''
  return c.html(<RootPath.Provider value={root}>{page}</RootPath.Provider> as unknown as string | Promise<string>, status)
}

/** A page that only says what went wrong (not found, a bad filter, a refused form). */
export function MessagePage(props: { title: string; message: string; signedIn: boolean }) {
  const root = useRoot()
  return (
    <Layout title={props.title} section='none' signedIn={props.signedIn}>
      <h1>{props.title}</h1>
      <p class='sub'>{props.message}</p>
      {props.signedIn && (
        <p>
          <a href={`${root}/portal/episodes`}>Back to episodes</a>
        </p>
      )}
    </Layout>
  )
}
