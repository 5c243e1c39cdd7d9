/**
 * Turns anything thrown inside a handler into the wire error body
 * `{ "error": message }`. Known errors keep their status and message; a
 * malformed-body error from Hono becomes 400; anything else (a driver error, a
 * storage failure, a bug) is logged and answered with a generic 500 so no SQL,
 * stack or secret reaches the client.
 */
import { HTTPException } from 'hono/http-exception'
import { EpisodicError } from '../errors.ts'
import type { Logger } from '../context.ts'

/** RFC 6750 challenge sent with every 401. */
export const WWW_AUTHENTICATE = 'Bearer realm="service"'

export function errorResponse(error: unknown, logger: Logger, request?: Request): Response {
  if (error instanceof EpisodicError) {
    const headers: Record<string, string> = { ...error.headers, 'content-type': 'application/json' }
    if (error.code === 'unauthorized') headers['www-authenticate'] = WWW_AUTHENTICATE
    if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds)
    if (error.code === 'internal') logger.error(describe(request), error.cause ?? error)
    const message = error.code === 'internal' ? 'internal error' : error.message
    return new Response(JSON.stringify({ error: message }), { status: error.status, headers })
  }
  if (error instanceof HTTPException && error.status < 500) {
    return Response.json({ error: error.message || 'bad request' }, { status: error.status })
  }
  logger.error(describe(request), error)
  return Response.json({ error: 'internal error' }, { status: 500 })
}

function describe(request?: Request): string {
  if (!request) return 'request failed'
  return `${request.method} ${new URL(request.url).pathname} failed`
}
