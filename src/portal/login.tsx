/** @jsxImportSource hono/jsx */
/**
 * Signing in and out. Sign-in takes an API key pasted into a form, checks it
 * exactly as the API does (so a revoked or wrong key fails the same way) and
 * answers with the session cookie; the key itself is never stored. Both forms
 * are POSTs accepted only from the portal's own pages.
 */
import { type Context, Hono } from 'hono'
import { parseApiKey } from '../auth/keys.ts'
import type { Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { readBodyText } from '../http/body.ts'
import { fromSameOrigin, isHttps, type PortalEnv, safeNext } from './guard.ts'
import { Layout, MessagePage, sendPage } from './layout.tsx'
import { useRoot } from './root.ts'
import { clearSessionCookie, readSessionCookie, setSessionCookie } from '../auth/session.ts'

/** A sign-in form is tiny; anything larger is not one. */
const FORM_LIMIT = 4096

function LoginPage(props: { next: string; error?: string }) {
  const root = useRoot()
  return (
    <Layout title='Sign in' section='none' signedIn={false}>
      <div class='login card'>
        <h1>Sign in</h1>
        <p class='sub'>
          Paste an API key of your client (<code>epk_…</code>). The portal keeps a signed session cookie for 12 hours, never the key; revoking the key ends the
          session.
        </p>
        {props.error && <p class='error-box' role='alert' id='login-error'>{props.error}</p>}
        <form method='post' action={`${root}/portal/login`}>
          <label for='api_key'>API key</label>
          <input
            id='api_key'
            name='api_key'
            type='password'
            autocomplete='off'
            spellcheck={false}
            required
            autofocus
            {...(props.error ? { 'aria-invalid': 'true', 'aria-describedby': 'login-error' } : {})}
          />
          <input type='hidden' name='next' value={props.next} />
          <button type='submit'>Sign in</button>
        </form>
      </div>
    </Layout>
  )
}

function refuseCrossSite(c: Context) {
  return sendPage(
    c,
    403,
    <MessagePage title='Refused' message="This form was not sent from the portal's own page. Open the portal and try again." signedIn={false} />,
  )
}

/** The client id of a pasted key, or null when the key is malformed, unknown, wrong or revoked. */
async function verifyKey(deps: Deps, key: string): Promise<{ clientId: string; keyId: string } | null> {
  const parsed = parseApiKey(key)
  if (!parsed) return null
  try {
    return { clientId: await deps.auth.authenticate(new Headers({ 'x-service-key': key })), keyId: parsed.keyId }
  } catch (error) {
    if (error instanceof EpisodicError && error.code === 'unauthorized') return null
    throw error
  }
}

/** `/portal/login` (GET form, POST sign-in) and `/portal/logout` (POST). */
export function loginRoutes(deps: Deps) {
  const app = new Hono<PortalEnv>()

  app.get('/login', async (c) => {
    const next = safeNext(c.req.query('next'), c.get('root'))
    if (await deps.sessions.verify(readSessionCookie(c))) return c.redirect(next, 302)
    return sendPage(c, 200, <LoginPage next={next} />)
  })

  // Every failed try counts, so guessing keys from one address is slow (429 + Retry-After);
  // a successful sign-in (303) does not use up the limit.
  if (deps.limits.signIn) app.post('/login', deps.limits.signIn)
  app.post('/login', async (c) => {
    if (!fromSameOrigin(c, deps)) return refuseCrossSite(c)
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase()
    if (type !== 'application/x-www-form-urlencoded') throw new EpisodicError('invalid', 'the sign-in form must be sent as application/x-www-form-urlencoded')
    const form = new URLSearchParams(await readBodyText(c.req.raw, FORM_LIMIT))
    const next = safeNext(form.get('next'), c.get('root'))
    const verified = await verifyKey(deps, (form.get('api_key') ?? '').trim())
    if (!verified) {
      return sendPage(c, 401, <LoginPage next={next} error='That API key was not accepted: it is mistyped, unknown or revoked.' />)
    }
    const { value, expiresAt } = await deps.sessions.issue(verified.keyId, verified.clientId)
    setSessionCookie(c, value, expiresAt, isHttps(c, deps), c.get('root'))
    c.header('cache-control', 'no-store')
    return c.redirect(next, 303)
  })

  app.post('/logout', (c) => {
    if (!fromSameOrigin(c, deps)) return refuseCrossSite(c)
    clearSessionCookie(c, isHttps(c, deps), c.get('root'))
    c.header('cache-control', 'no-store')
    return c.redirect(`${c.get('root')}/portal/login`, 303)
  })

  return app
}
