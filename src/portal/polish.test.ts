/**
 * Portal polish through `app.request()`: the service root leads to the
 * portal (also under a prefix), short episode ids as `replay run` prints them
 * resolve, and the episode list filters on metadata and a time range,
 * keeping the filters in its pager links.
 */
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createKey } from '../admin/admin.ts'
import { createApp, type EpisodicApp } from '../app.ts'
import { insertEpisode, type NewEpisode } from '../episodes/rows.ts'
import { createLocalStorage } from '../storage/local.ts'
import { createMemoryFiles } from '../storage/memory-files.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'

const ORIGIN = 'http://portal.test'
let app: EpisodicApp
let key: string
let clientId: string
let cookie: string

beforeAll(async () => {
  app = createApp({ db: await openTestDatabase(), sessionSecret: 'a-test-session-secret-of-32-chars!!', logger: { error: () => {} } })
  clientId = (await createClient(app.deps, 'polish')).id
  key = (await createKey(app.deps, 'polish')).key
  const login = await app.request(`${ORIGIN}/portal/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ api_key: key }).toString(),
  })
  cookie = login.headers.get('set-cookie')!.split(';')[0]!
})
afterAll(() => app.deps.db.destroy())

const page = (path: string) => app.request(`${ORIGIN}${path}`, { headers: { cookie } })
const episode = (id: string, name: string, metadata: Record<string, unknown>, now = new Date(), extra: Partial<NewEpisode> = {}) =>
  insertEpisode(app.deps.db, {
    id,
    clientId,
    name,
    source: 'real',
    robot: null,
    policyVersion: null,
    envVersion: null,
    gitSha: null,
    seed: null,
    fps: null,
    metadata,
    artifacts: [],
    now,
    ...extra,
  })

describe('portal polish', () => {
  it('sends GET / to the portal, at the root and under a prefix', async () => {
    expect((await app.request(`${ORIGIN}/`)).headers.get('location')).toBe('/portal')
    const prefixed = createApp({ db: app.deps.db, baseUrl: `${ORIGIN}/episodic`, logger: { error: () => {} } })
    const mounted = new Hono().route('/episodic', prefixed)
    const reply = await mounted.request(`${ORIGIN}/episodic`)
    expect(reply.status).toBe(302)
    expect(reply.headers.get('location')).toBe('/episodic/portal')
    // nodeListener hands what its mount does not match (here `/episodic/`) to the app itself
    mounted.notFound((c) => prefixed.fetch(c.req.raw))
    expect((await mounted.request(`${ORIGIN}/episodic/`)).headers.get('location')).toBe('/episodic/portal')
    expect((await mounted.request(`${ORIGIN}/episodic/portal`)).headers.get('location')).toBe('/episodic/portal/episodes')
  })

  it("keeps the plots' script, stylesheet and downloads under the prefix", async () => {
    const prefixed = createApp({
      db: app.deps.db,
      baseUrl: `${ORIGIN}/episodic`,
      sessionSecret: 'a-test-session-secret-of-32-chars!!',
      storage: createLocalStorage({ files: createMemoryFiles(), secret: 'storage-secret' }),
      logger: { error: () => {} },
    })
    const mounted = new Hono().route('/episodic', prefixed)
    const opened = await mounted.request(`${ORIGIN}/episodic/api/ingest/episode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fps: 10, request_uploads: ['sensors', 'video'] }),
    })
    const { episode_id: id, upload_urls } = (await opened.json()) as { episode_id: string; upload_urls: { kind: string; url: string }[] }
    // The page shows a player only for a video that arrived (src/portal/artifacts.tsx).
    const video = upload_urls.find((entry) => entry.kind === 'video')!.url
    expect((await mounted.request(video, { method: 'PUT', body: 'mp4', headers: { 'content-type': 'video/mp4', 'content-length': '3' } })).status).toBe(200)
    const reply = await mounted.request(`${ORIGIN}/episodic/portal/episodes/${id}`, { headers: { cookie } })
    expect(reply.headers.get('content-security-policy')).toContain("script-src 'self'")
    const html = await reply.text()
    expect(html).toContain('src="/episodic/portal/assets/plots.js"')
    expect(html).toContain('href="/episodic/portal/assets/uplot.css"')
    const sources = JSON.parse(/data-sources="([^"]*)"/.exec(html)![1]!.replaceAll('&quot;', '"')) as Array<{ url: string; check: string }>
    expect(sources).toEqual([
      expect.objectContaining({ url: `/episodic/api/episodes/${id}/artifact/sensors?redirect=1`, check: `/episodic/api/episodes/${id}/artifacts` }),
    ])
    expect(html).toContain('data-plot-video=""')
    expect((await mounted.request(`${ORIGIN}/episodic/portal/assets/plots.js`)).status).toBe(200)
  })

  it('resolves the short id `replay run` prints, lists an ambiguous one, and 404s an unknown one', async () => {
    await episode('3f2a9c1e-0000-4000-8000-000000000001', 'short-a', {})
    await episode('3f2a0000-0000-4000-8000-000000000002', 'short-b', {})
    const one = await page('/portal/episodes/3f2a9c1e')
    expect(one.status).toBe(302)
    expect(one.headers.get('location')).toBe('/portal/episodes/3f2a9c1e-0000-4000-8000-000000000001')
    expect((await page('/portal/episodes/3F2A9C1E-0000')).headers.get('location')).toBe('/portal/episodes/3f2a9c1e-0000-4000-8000-000000000001')
    const both = await page('/portal/episodes/3f2a')
    expect(both.status).toBe(200)
    const html = await both.text()
    expect(html).toContain('href="/portal/episodes/3f2a9c1e-0000-4000-8000-000000000001"')
    expect(html).toContain('href="/portal/episodes/3f2a0000-0000-4000-8000-000000000002"')
    for (const unknown of ['ffff0000', 'zz', '3f2', 'not-an-id']) expect((await page(`/portal/episodes/${unknown}`)).status, unknown).toBe(404)
  })

  it('filters the episode list on metadata and a time range, keeping them in the pager', async () => {
    const day = (d: number) => new Date(Date.UTC(2026, 4, d, 12))
    await episode(crypto.randomUUID(), 'reach-1', { task: 'reach', site: 'lab 2' }, day(1))
    await episode(crypto.randomUUID(), 'reach-2', { task: 'reach', site: 'lab 2' }, day(2))
    await episode(crypto.randomUUID(), 'reach-3', { task: 'reach', site: 'lab 1' }, day(3))
    await episode(crypto.randomUUID(), 'push-1', { task: 'push' }, day(2))
    const names = async (query: string) =>
      [...(await (await page(`/portal/episodes?${query}`)).text()).matchAll(/<td class="head"><a [^>]*>([^<]+)<\/a>/g)].map((m) => m[1])
    expect(await names(`metadata=${encodeURIComponent('task=reach site="lab 2"')}`)).toEqual(['reach-2', 'reach-1'])
    expect(await names('metadata.task=reach&created_after=2026-05-02&created_before=2026-05-03')).toEqual(['reach-2'])
    expect(await names('metadata=task%3Dpush&metadata.task=reach')).toEqual(['push-1']) // the form's text wins over a stale parameter
    const first = await (await page(`/portal/episodes?metadata=task%3Dreach&limit=1`)).text()
    const next = /<a href="([^"]+)" rel="next">/.exec(first)![1]!.replaceAll('&amp;', '&')
    expect(new URL(next, ORIGIN).searchParams.get('metadata.task')).toBe('reach')
    expect(first).toContain('value="task=reach"')
    const bad = await page('/portal/episodes?created_after=last-week')
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain('created from: must be an ISO 8601 date')
  })

  it('offers the video cursor on the plots only when the video is in the store', async () => {
    const files = createMemoryFiles()
    const withStore = createApp({
      db: app.deps.db,
      storage: createLocalStorage({ files, secret: 'store-secret' }),
      sessionSecret: 'a-test-session-secret-of-32-chars!!',
      logger: { error: () => {} },
    })
    const id = '0b5e0000-0000-4000-8000-0000000000f1'
    await episode(id, 'video-pending', {}, new Date(), { fps: 10, artifacts: ['video', 'sensors'] })
    const html = async () => (await withStore.request(`${ORIGIN}/portal/episodes/${id}`, { headers: { cookie } })).text()
    await files.put(`${clientId}/${id}/sensors.npz`, new Response('npz').body!)
    const before = await html()
    expect(before).toMatch(/data-kind="video" data-present="false"/)
    expect(before).not.toContain('The video moves a cursor')
    await files.put(`${clientId}/${id}/video.mp4`, new Response('mp4').body!)
    expect(await html()).toContain('The video moves a cursor on every plot')
  })

  it('names an empty icon, so browsers do not ask the host for /favicon.ico', async () => {
    expect(await (await page('/portal/episodes')).text()).toContain('<link rel="icon" href="data:,"/>')
  })
})
