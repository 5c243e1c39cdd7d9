/**
 * The portal mounted under a path prefix (as `nodeListener(app, { prefix })`
 * mounts it), with the public URL saying so: every link, form, redirect and
 * artifact URL stays under the prefix.
 */
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createKey } from '../admin/admin.ts'
import { createApp, type EpisodicApp } from '../app.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import { createLocalStorage } from '../storage/local.ts'
import { createMemoryFiles } from '../storage/memory-files.ts'

const ORIGIN = 'http://portal.test'
const PREFIX = '/episodic'
let app: EpisodicApp
let mounted: Hono
let key: string

beforeAll(async () => {
  app = createApp({
    db: await openTestDatabase(),
    storage: createLocalStorage({ files: createMemoryFiles(), secret: 'storage-secret' }),
    sessionSecret: 'a-test-session-secret-of-32-chars!!',
    baseUrl: `${ORIGIN}${PREFIX}`,
    logger: { error: () => {} },
  })
  mounted = new Hono().route(PREFIX, app)
  await createClient(app.deps, 'prefixed')
  key = (await createKey(app.deps, 'prefixed')).key
})
afterAll(() => app.deps.db.destroy())

const get = (path: string, cookie?: string) => mounted.request(`${ORIGIN}${path}`, { headers: cookie ? { cookie } : {} })

function login(next?: string) {
  return mounted.request(`${ORIGIN}${PREFIX}/portal/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ api_key: key, ...(next ? { next } : {}) }).toString(),
  })
}

/** Every same-site URL a page points at (href, src, action), which must all be under the prefix. */
function localUrls(html: string): string[] {
  return [...html.matchAll(/\b(?:href|src|action)="(\/[^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'))
}

describe('portal under a path prefix', () => {
  it('redirects, guards and signs in under the prefix, refusing next targets outside it', async () => {
    expect((await get(`${PREFIX}/portal`)).headers.get('location')).toBe(`${PREFIX}/portal/episodes`)
    // behind a proxy that strips the prefix, requests arrive at /portal but links keep the public prefix
    expect((await app.request(`${ORIGIN}/portal`)).headers.get('location')).toBe(`${PREFIX}/portal/episodes`)
    expect((await get(`${PREFIX}/portal/eval-runs`)).headers.get('location')).toBe(`${PREFIX}/portal/login?next=%2Fepisodic%2Fportal%2Feval-runs`)
    expect((await login(`${PREFIX}/portal/eval-runs?status=done`)).headers.get('location')).toBe(`${PREFIX}/portal/eval-runs?status=done`)
    for (const outside of ['/portal/eval-runs', '//evil.example/episodic/portal', `${PREFIX}/portalx`, 'https://evil.example/']) {
      expect((await login(outside)).headers.get('location'), outside).toBe(`${PREFIX}/portal/episodes`)
    }
    const cookie = (await login()).headers.get('set-cookie')!.split(';')[0]!
    expect((await get(`${PREFIX}/portal/episodes/`, cookie)).headers.get('location')).toBe(`${PREFIX}/portal/episodes`)
  })

  it("scopes the session cookie to the prefix, not the host's other routes", async () => {
    expect((await login()).headers.get('set-cookie')).toMatch(new RegExp(`; Path=${PREFIX};`))
    // Signing out clears it there, and on / where an earlier version set it.
    const out = await mounted.request(`${ORIGIN}${PREFIX}/portal/logout`, { method: 'POST', headers: { origin: ORIGIN } })
    const cleared = out.headers.getSetCookie()
    expect(cleared.some((c) => c.includes(`Path=${PREFIX};`) && c.includes('Max-Age=0'))).toBe(true)
    expect(cleared.some((c) => c.includes('Path=/;') && c.includes('Max-Age=0'))).toBe(true)
  })

  it('links every page, form, stylesheet and artifact under the prefix, and they all answer', async () => {
    const cookie = (await login()).headers.get('set-cookie')!.split(';')[0]!
    const opened = await mounted.request(`${ORIGIN}${PREFIX}/api/ingest/episode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'under-prefix', request_uploads: ['video', 'actions'] }),
    })
    const { episode_id: id, upload_urls: uploads } = (await opened.json()) as { episode_id: string; upload_urls: { url: string }[] }
    expect(uploads.length).toBe(2)
    for (const { url } of uploads) expect(new URL(url).pathname.startsWith(`${PREFIX}/`), url).toBe(true)
    // The page links only artifacts that arrived: upload the video through its prefixed URL.
    const stored = await mounted.request(uploads[0]!.url, { method: 'PUT', body: 'mp4', headers: { 'content-type': 'video/mp4', 'content-length': '3' } })
    expect(stored.status).toBe(200)

    const seen = new Set<string>()
    // the sign-in page signed out (signed in, it redirects), the others signed in
    for (
      const [path, as] of [[`${PREFIX}/portal/login`, undefined], [`${PREFIX}/portal/episodes`, cookie], [`${PREFIX}/portal/episodes/${id}`, cookie], [
        `${PREFIX}/portal/eval-runs`,
        cookie,
      ]] as const
    ) {
      const reply = await get(path, as)
      expect(reply.status, path).toBe(200)
      for (const url of localUrls(await reply.text())) seen.add(url)
    }
    expect([...seen].filter((url) => !url.startsWith(`${PREFIX}/`))).toEqual([])
    expect(seen).toContain(`${PREFIX}/portal/assets/style.css`)
    expect(seen).toContain(`${PREFIX}/portal/logout`)
    expect(seen).toContain(`${PREFIX}/api/episodes/${id}/artifact/video?redirect=1`)

    for (const url of seen) {
      if (url.endsWith('/logout') || url.endsWith('/login')) continue // form targets, POSTed by the tests above
      const reply = await get(url, cookie)
      // pages and the stylesheet answer; the artifact route redirects to a signed URL under the prefix
      if (url.includes('/artifact/')) expect(new URL(reply.headers.get('location')!).pathname.startsWith(`${PREFIX}/`), url).toBe(true)
      else expect(reply.status, url).toBe(200)
    }
  })

  it('signs out back to the prefixed sign-in page', async () => {
    const cookie = (await login()).headers.get('set-cookie')!.split(';')[0]!
    const out = await mounted.request(`${ORIGIN}${PREFIX}/portal/logout`, { method: 'POST', headers: { origin: ORIGIN, cookie } })
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe(`${PREFIX}/portal/login`)
  })
})
