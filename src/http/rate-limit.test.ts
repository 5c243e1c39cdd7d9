import { describe, expect, it } from 'vitest'
import { Hono } from 'hono'
import { behindProxy, rateLimit } from './rate-limit.ts'

describe('rate limits', () => {
  it('refuses past the limit per key with Retry-After, and skips requests without a key', async () => {
    const app = new Hono()
    app.use(
      '*',
      rateLimit({ limit: 2, windowMs: 60_000 }, (c) => c.req.header('x-who'), (c, retryAfter) => {
        c.header('retry-after', String(retryAfter))
        return c.text('slow down', 429)
      }),
    )
    app.get('/', (c) => c.text('ok'))
    const get = (who?: string) => app.request('/', { headers: who ? { 'x-who': who } : {} })
    expect((await get('a')).status).toBe(200)
    expect((await get('a')).status).toBe(200)
    const refused = await get('a')
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    expect((await get('b')).status).toBe(200)
    for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200)
  })

  it('takes the nearest proxy hop of X-Forwarded-For when told to trust it', () => {
    const address = behindProxy(() => 'socket')
    expect(address(new Request('http://h/', { headers: { 'x-forwarded-for': '1.1.1.1, 10.0.0.2' } }), undefined)).toBe('10.0.0.2')
    expect(address(new Request('http://h/'), undefined)).toBe('socket')
  })
})
