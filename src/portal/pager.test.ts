/**
 * The portal lists' "Next page" links keep the query they page through: every
 * filter and the page size, so page 2 of a filtered list is page 2 of the same
 * list (not of the unfiltered one).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createKey } from '../admin/admin.ts'
import { createApp, type EpisodicApp } from '../app.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'

const ORIGIN = 'http://portal.test'
let app: EpisodicApp
let key: string
let cookie: string

function api(path: string, body: unknown) {
  return app.request(`${ORIGIN}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

beforeAll(async () => {
  app = createApp({ db: await openTestDatabase(), storage: null, sessionSecret: 'a-test-session-secret-of-32-chars!!', logger: { error: () => {} } })
  await createClient(app.deps, 'pager')
  key = (await createKey(app.deps, 'pager')).key
  const login = await app.request(`${ORIGIN}/portal/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ api_key: key }).toString(),
  })
  cookie = login.headers.get('set-cookie')!.split(';')[0]!
  const ids: string[] = []
  for (let i = 0; i < 10; i++) {
    const opened = await api('/api/ingest/episode', { name: `e${i}`, robot: i % 2 ? 'odd' : 'even', request_uploads: [] })
    ids.push(((await opened.json()) as { episode_id: string }).episode_id)
  }
  for (let i = 0; i < 10; i++) {
    expect((await api('/api/ingest/eval-run', { name: `r${i}`, candidate_policy_version: i % 2 ? 'v3' : 'v2', baseline_episode_ids: [ids[0]] })).status).toBe(
      201,
    )
  }
})
afterAll(() => app.deps.db.destroy())

/** The page's rows (by a pattern's first group) and its "Next page" link, if any. */
async function read(path: string, row: RegExp): Promise<{ rows: string[]; next: string | null }> {
  const reply = await app.request(`${ORIGIN}${path}`, { headers: { cookie } })
  expect(reply.status).toBe(200)
  const html = await reply.text()
  const next = html.match(/<a href="([^"]*)" rel="next">/)?.[1]?.replaceAll('&amp;', '&') ?? null
  return { rows: [...html.matchAll(row)].map((m) => m[1]!), next }
}

async function allPages(path: string, row: RegExp): Promise<string[][]> {
  const pages: string[][] = []
  for (let url: string | null = path; url && pages.length < 10;) {
    const page = await read(url, row)
    pages.push(page.rows)
    url = page.next
  }
  return pages
}

describe('portal pager', () => {
  it('keeps the episode filters and the page size on the next page', async () => {
    const pages = await allPages('/portal/episodes?robot=odd&limit=2', /<td data-label="robot">([^<]*)<\/td>/g)
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
    expect(pages.flat()).toEqual(Array(5).fill('odd'))
  })

  it('keeps the eval-run filters and the page size on the next page', async () => {
    const pages = await allPages('/portal/eval-runs?candidate_policy_version=v2&limit=2', /<td data-label="candidate">([^<]*)<\/td>/g)
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
    expect(pages.flat()).toEqual(Array(5).fill('v2'))
  })
})
