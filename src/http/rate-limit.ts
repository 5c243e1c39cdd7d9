/**
 * Request rate limits, counted with hono-rate-limiter's in-memory store: per
 * instance, so with N instances behind a balancer a caller gets up to N times
 * the limit (docs/hardening.md). Two uses: portal sign-in per client address
 * (on by default, 10 failed tries a minute) and API requests per key (off unless
 * configured). A counted answer carries the `RateLimit-*` headers; a
 * refused request gets 429 with them and `Retry-After`.
 *
 * @example
 * const limit = rateLimit({ limit: 10, windowMs: 60_000 }, (c) => address(c), refuse)
 * app.post('/login', limit, handler)
 */
import type { Context, MiddlewareHandler } from 'hono'
import { rateLimiter } from 'hono-rate-limiter'

/** At most `limit` requests per `windowMs` milliseconds. */
export interface RateLimit {
  /** Requests allowed per window. */
  limit: number
  /** Window length in milliseconds. */
  windowMs: number
}

/** Portal sign-in default: 10 failed tries a minute per client address. */
export const SIGN_IN_LIMIT: RateLimit = { limit: 10, windowMs: 60_000 }

/**
 * The client address of a request, given the runtime's `env` (the Node
 * adapter reads the socket; Workers `cf-connecting-ip`). Undefined when the
 * runtime does not tell: such requests are not limited by address.
 */
export type ClientAddress = (request: Request, env: unknown) => string | undefined

/**
 * The address as a trusted reverse proxy reports it: the last entry of
 * `X-Forwarded-For` (the one the nearest proxy added), else `fallback`.
 */
export function behindProxy(fallback: ClientAddress): ClientAddress {
  return (request, env) => {
    const forwarded = request.headers.get('x-forwarded-for')
    const last = forwarded?.split(',').pop()?.trim()
    return last || fallback(request, env)
  }
}

/** What hono-rate-limiter keeps as `rateLimit` for a request it counted. */
interface RateLimitInfo {
  limit: number
  remaining: number
  resetTime?: Date
}

/**
 * The `RateLimit-Limit`, `-Remaining` and `-Reset` headers (IETF draft 6)
 * for this request's count; none for a request that was not counted.
 */
export function rateLimitHeaders(c: Context, windowMs: number): Record<string, string> {
  const info = c.get('rateLimit' as never) as RateLimitInfo | undefined
  if (!info) return {}
  return { 'ratelimit-limit': String(info.limit), 'ratelimit-remaining': String(info.remaining), 'ratelimit-reset': String(retryAfterSeconds(c, windowMs)) }
}

/** Seconds until the caller's window resets (the Retry-After value), at least 1. */
export function retryAfterSeconds(c: Context, windowMs: number): number {
  const info = c.get('rateLimit' as never) as { resetTime?: Date } | undefined
  // hono-rate-limiter's store stamps resetTime from the wall clock, so it is compared with that one.
  const ms = info?.resetTime ? info.resetTime.getTime() - Date.now() : windowMs
  return Math.max(1, Math.ceil(ms / 1000))
}

/**
 * A middleware allowing `limit.limit` requests per window for each key
 * `keyOf` returns (requests it returns undefined for are not counted), and
 * answering the rest with `refuse`. With `failuresOnly`, a request answered
 * below 400 is taken back off the count: only failed tries use up the limit
 * (sign-in: guessing keys stays slow, signing in again does not lock anyone
 * out). The limiter and its store are made on the first request: Workers
 * forbid timers outside a request.
 */
export function rateLimit<C extends Context>(
  limit: RateLimit,
  keyOf: (c: C) => string | undefined,
  refuse: (c: C, retryAfter: number, headers: Record<string, string>) => Response | Promise<Response>,
  options: { failuresOnly?: boolean } = {},
): MiddlewareHandler {
  let middleware: MiddlewareHandler | undefined
  return async (c, next) => {
    middleware ??= rateLimiter({
      windowMs: limit.windowMs,
      limit: limit.limit,
      skipSuccessfulRequests: options.failuresOnly === true,
      // Written below instead: hono-rate-limiter sets them before the route runs, and a route
      // that answers with its own Response (all of ours do) drops headers set that way.
      standardHeaders: false,
      skip: (ctx) => keyOf(ctx as C) === undefined,
      keyGenerator: (ctx) => keyOf(ctx as C)!,
      handler: (ctx) => refuse(ctx as C, retryAfterSeconds(ctx, limit.windowMs), rateLimitHeaders(ctx, limit.windowMs)) as never,
    })
    const refused = await middleware(c, next)
    if (refused instanceof Response) c.res = refused
    const headers = rateLimitHeaders(c, limit.windowMs)
    // A success taken back off the count (failuresOnly) left what remains as it was before it.
    if (options.failuresOnly && c.res.status < 400 && headers['ratelimit-remaining'] !== undefined) {
      headers['ratelimit-remaining'] = String(Math.min(limit.limit, Number(headers['ratelimit-remaining']) + 1))
    }
    for (const [name, value] of Object.entries(headers)) c.header(name, value)
  }
}
