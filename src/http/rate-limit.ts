/**
 * Request rate limits, counted with hono-rate-limiter's in-memory store: per
 * instance, so with N instances behind a balancer a caller gets up to N times
 * the limit (docs/hardening.md). Two uses: portal sign-in per client address
 * (on by default, 10 failed tries a minute) and API requests per key (off unless
 * configured). A refused request gets 429 with `Retry-After`.
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

/** Seconds until the caller's window resets (the Retry-After value), at least 1. */
export function retryAfterSeconds(c: Context, windowMs: number): number {
  const info = c.get('rateLimit' as never) as { resetTime?: Date } | undefined
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
  refuse: (c: C, retryAfter: number) => Response | Promise<Response>,
  options: { failuresOnly?: boolean } = {},
): MiddlewareHandler {
  let middleware: MiddlewareHandler | undefined
  return (c, next) => {
    middleware ??= rateLimiter({
      windowMs: limit.windowMs,
      limit: limit.limit,
      skipSuccessfulRequests: options.failuresOnly === true,
      standardHeaders: 'draft-6',
      skip: (ctx) => keyOf(ctx as C) === undefined,
      keyGenerator: (ctx) => keyOf(ctx as C)!,
      handler: (ctx) => refuse(ctx as C, retryAfterSeconds(ctx, limit.windowMs)) as never,
    })
    return middleware(c, next)
  }
}
