/**
 * What stands in front of the portal's pages: the session guard (no live
 * session: off to the sign-in page, coming back afterwards), the same-origin
 * check for the portal's forms (sign-in and sign-out are POSTs; with the
 * SameSite=Lax cookie this closes cross-site request forgery), and whether the
 * portal is served over https (then the cookie is Secure).
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { Deps } from '../context.ts'
import { readSessionCookie, type Session } from '../auth/session.ts'

/** Hono environment of the portal's pages: the caller's client and session. */
export interface PortalEnv {
  /** `root`: the path the app is served under ('' or e.g. '/episodic'; see root.ts). */
  Variables: { clientId: string; session: Session; root: string }
}

/** The origin the browser sees: the configured public URL, else the request's. */
export function publicOrigin(c: Context, deps: Pick<Deps, 'baseUrl'>): string {
  return deps.baseUrl ? new URL(deps.baseUrl).origin : new URL(c.req.url).origin
}

/** True when the browser talks https to us (directly, via the configured URL, or through a proxy). */
export function isHttps(c: Context, deps: Pick<Deps, 'baseUrl'>): boolean {
  return publicOrigin(c, deps).startsWith('https:') || c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https'
}

/**
 * Whether a form POST comes from one of our own pages. Browsers send
 * `Sec-Fetch-Site` (trustworthy origins) or at least `Origin` with every POST;
 * a request with neither is refused, since a portal form always has one.
 */
export function fromSameOrigin(c: Context, deps: Pick<Deps, 'baseUrl'>): boolean {
  const site = c.req.header('sec-fetch-site')
  if (site) return site === 'same-origin'
  const origin = c.req.header('origin')
  return origin !== undefined && origin === publicOrigin(c, deps)
}

/**
 * Where to go after signing in: only a portal path of this site under `root`
 * (never another host, so the sign-in page is no open redirect).
 */
export function safeNext(next: string | null | undefined, root = ''): string {
  const portal = `${root}/portal`
  const rest = next?.startsWith(portal) ? next.slice(portal.length) : undefined
  return next && rest !== undefined && /^(\/[^\\\s]*)?(\?[^\\\s]*)?$/.test(rest) && !next.startsWith('//') ? next : `${portal}/episodes`
}

/** Resolves the session into `clientId`; without one, redirects to `/portal/login?next=<this page>`. */
export function requireSession(deps: Pick<Deps, 'sessions'>) {
  return createMiddleware<PortalEnv>(async (c, next) => {
    const session = await deps.sessions.verify(readSessionCookie(c))
    if (!session) {
      const url = new URL(c.req.url)
      const back = encodeURIComponent(c.get('root') + url.pathname + url.search)
      c.header('cache-control', 'no-store')
      return c.redirect(`${c.get('root')}/portal/login?next=${back}`, 302)
    }
    c.set('session', session)
    c.set('clientId', session.clientId)
    await next()
  })
}
