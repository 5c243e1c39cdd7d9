/**
 * Hono middleware that authenticates the API key and stores the caller's
 * client id as `c.get('clientId')`.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv, Deps } from '../context.ts'

export function requireApiKey(deps: Pick<Deps, 'auth'>) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set('clientId', await deps.auth.authenticate(c.req.raw.headers))
    await next()
  })
}
