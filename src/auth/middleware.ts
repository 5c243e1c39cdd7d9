/**
 * Hono middleware that resolves the calling client and stores its id as
 * `c.get('clientId')`.
 *
 * Writes, and every ingest route (`requireKey`), always need the API key.
 * Reads (GET and HEAD: the episode and eval-run read endpoints and the
 * artifact route) also accept a portal
 * session cookie when no key header is sent (contract, "Read endpoints (API
 * key or portal session)"), so the portal's links and `<video>` work in the
 * browser. A key header, when present, is what counts; a bad key is a 401 even
 * with a good cookie, and no cookie or a dead one gives the same 401 as a
 * missing key.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv, Deps } from '../context.ts'
import { readSessionCookie } from '../auth/session.ts'
import { offersKey, presentedKey } from './authenticate.ts'
import { parseApiKey } from './keys.ts'

/** Then, when configured, counts the request against its key's rate limit (`deps.limits.api`). */
export function requireKeyOrSession(deps: Pick<Deps, 'auth' | 'sessions'> & Partial<Pick<Deps, 'limits'>>) {
  return authenticated(deps, true)
}

/**
 * Only an API key, whatever the method: the ingest routes (`/api/ingest/...`),
 * whose GETs (resuming a multipart upload) mint upload URLs, so a portal
 * session, which only ever reads, must not reach them.
 */
export function requireKey(deps: Pick<Deps, 'auth' | 'sessions'> & Partial<Pick<Deps, 'limits'>>) {
  return authenticated(deps, false)
}

function authenticated(deps: Pick<Deps, 'auth' | 'sessions'> & Partial<Pick<Deps, 'limits'>>, sessionReads: boolean) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const headers = c.req.raw.headers
    const read = sessionReads && (c.req.method === 'GET' || c.req.method === 'HEAD')
    // A Basic Authorization (a proxy's gate the browser answers) is not a key: the session still counts.
    const keyGiven = offersKey(headers)
    const session = read && !keyGiven ? await deps.sessions.verify(readSessionCookie(c)) : null
    c.set('clientId', session ? session.clientId : await deps.auth.authenticate(headers))
    const limit = deps.limits?.api
    if (!limit) return next()
    c.set('keyId', session ? session.keyId : parseApiKey(presentedKey(headers) ?? '')!.keyId)
    await limit(c, next)
  })
}
