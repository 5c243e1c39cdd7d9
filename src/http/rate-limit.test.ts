import { describe, expect, it } from 'vitest'
import { Hono } from 'hono'
import { behindProxy, rateLimit } from './rate-limit.ts'

describe('rate limits', () => {
  it('refuses past the limit per key with Retry-After, and skips requests without a key', async () => {
    const app = new Hono()
    app.use(
      '*',
      rateLimit({ limit: 2, windowMs: 60_000 }, (c) => c.req.header('x-who'), (c, retryAfter, headers) => {
        c.header('retry-after', String(retryAfter))
        for (const [name, value] of Object.entries(headers)) c.header(name, value)
        return c.text('slow down', 429)
      }),
    )
    // A route answering with its own Response, as the API's do.
    app.get('/', () => new Response('ok'))
    const get = (who?: string) => app.request('/', { headers: who ? { 'x-who': who } : {} })
    const first = await get('a')
    expect(first.status).toBe(200)
    expect([first.headers.get('ratelimit-limit'), first.headers.get('ratelimit-remaining')]).toEqual(['2', '1'])
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
    expect((await get('a')).headers.get('ratelimit-remaining')).toBe('0')
    const refused = await get('a')
    expect(refused.status).toBe(429)
    expect([refused.headers.get('ratelimit-limit'), refused.headers.get('ratelimit-remaining')]).toEqual(['2', '0'])
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    expect((await get('b')).status).toBe(200)
    for (let i = 0; i < 5; i++) {
      const uncounted = await get()
      expect(uncounted.status).toBe(200)
      expect(uncounted.headers.has('ratelimit-limit')).toBe(false)
    }
  })

  it('takes the nearest proxy hop of X-Forwarded-For when told to trust it', () => {
    const address = behindProxy(() => 'socket')
    expect(address(new Request('http://h/', { headers: { 'x-forwarded-for': '1.1.1.1, 10.0.0.2' } }), undefined)).toBe('10.0.0.2')
    expect(address(new Request('http://h/'), undefined)).toBe('socket')
  })
})
