/**
 * The portal through `app.request()` (no server): sign-in and its cookie,
 * the session guard, CSRF refusals, per-client 404s, escaping, and the read
 * API accepting the session. The browser suite (test/browser) covers the
 * same flows in Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createKey, revokeKey } from '../admin/admin.ts'
import { createApp, type EpisodicApp } from '../app.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import { createLocalStorage } from '../storage/local.ts'
import { createMemoryFiles } from '../storage/memory-files.ts'
import { SESSION_TTL_SECONDS } from '../auth/session.ts'

const ORIGIN = 'http://portal.test'
let app: EpisodicApp
let offset = 0
let n = 0

beforeAll(async () => {
  const db = await openTestDatabase()
  app = createApp({
    db,
    storage: createLocalStorage({ files: createMemoryFiles(), secret: 'storage-secret' }),
    clock: { now: () => new Date(Date.now() + offset) },
    sessionSecret: 'a-test-session-secret-of-32-chars!!',
    logger: { error: () => {} },
  })
})
afterAll(() => app.deps.db.destroy())

async function tenant() {
  const name = `t${++n}`
  await createClient(app.deps, name)
  const key = await createKey(app.deps, name)
  return { key: key.key, keyId: key.key_id }
}

function api(path: string, key: string, body?: unknown) {
  return app.request(`${ORIGIN}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

async function episode(key: string, body: Record<string, unknown> = {}): Promise<string> {
  const reply = await api('/api/ingest/episode', key, { request_uploads: [], ...body })
  expect(reply.status).toBe(201)
  return ((await reply.json()) as { episode_id: string }).episode_id
}

function login(key: string, headers: Record<string, string> = { origin: ORIGIN }, next?: string, base = ORIGIN) {
  const form = new URLSearchParams({ api_key: key, ...(next ? { next } : {}) })
  return app.request(`${base}/portal/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form.toString(),
  })
}

/** Signs in and returns the `Cookie` header value. */
async function session(key: string): Promise<string> {
  const reply = await login(key)
  expect(reply.status).toBe(303)
  return reply.headers.get('set-cookie')!.split(';')[0]!
}

const page = (path: string, cookie?: string) => app.request(`${ORIGIN}${path}`, { headers: cookie ? { cookie } : {} })

describe('sign-in', () => {
  it('redirects pages to the sign-in form, and /portal to the episode list', async () => {
    expect((await page('/portal')).headers.get('location')).toBe('/portal/episodes')
    const guarded = await page('/portal/eval-runs?status=pending')
    expect(guarded.status).toBe(302)
    expect(guarded.headers.get('location')).toBe('/portal/login?next=%2Fportal%2Feval-runs%3Fstatus%3Dpending')
    const form = await page('/portal/login')
    expect(form.status).toBe(200)
    const html = await form.text()
    expect(html).toMatch(/^<!doctype html>/)
    expect(html).toContain('name="api_key"')
    expect(form.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(form.headers.get('content-security-policy')).not.toContain('script-src')
  })

  it('sets an HttpOnly, SameSite=Lax, expiring cookie; Secure only on https', async () => {
    const { key } = await tenant()
    const reply = await login(key, { origin: ORIGIN }, '/portal/eval-runs')
    expect(reply.status).toBe(303)
    expect(reply.headers.get('location')).toBe('/portal/eval-runs')
    const cookie = reply.headers.get('set-cookie')!
    expect(cookie).toMatch(/^episodic_session=v1\.[a-z2-7]{12}\.[0-9a-f-]{36}\.\d+\.[\w-]{43};/)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Lax')
    expect(cookie).toContain('Path=/')
    expect(cookie).toContain(`Max-Age=${SESSION_TTL_SECONDS}`)
    expect(cookie).toContain('Expires=')
    expect(cookie).not.toContain('Secure')
    expect(cookie).not.toContain(key.slice(17)) // the secret never goes into the cookie
    const https = await login(key, { origin: 'https://portal.test' }, undefined, 'https://portal.test')
    expect(https.headers.get('set-cookie')).toContain('Secure')
  })

  it('refuses a wrong, malformed or revoked key with the same page and no cookie', async () => {
    const t = await tenant()
    const revoked = await tenant()
    await revokeKey(app.deps, revoked.keyId)
    const texts = new Set<string>()
    for (const key of [t.key.slice(0, -1) + (t.key.endsWith('A') ? 'B' : 'A'), 'nope', '', revoked.key, 'epk_x\nset-cookie: a=b']) {
      const reply = await login(key)
      expect(reply.status).toBe(401)
      expect(reply.headers.get('set-cookie')).toBeNull()
      texts.add(await reply.text())
    }
    expect(texts.size).toBe(1)
  })

  it('refuses cross-site form posts (CSRF) for sign-in and sign-out', async () => {
    const { key } = await tenant()
    const refused: Array<Record<string, string>> = [{}, { origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site', origin: ORIGIN }, {
      origin: 'null',
    }]
    for (const headers of refused) {
      const reply = await login(key, headers)
      expect(reply.status).toBe(403)
      expect(reply.headers.get('set-cookie')).toBeNull()
    }
    expect((await login(key, { 'sec-fetch-site': 'same-origin' })).status).toBe(303)
    const out = await app.request(`${ORIGIN}/portal/logout`, { method: 'POST', headers: { origin: 'https://evil.example' } })
    expect(out.status).toBe(403)
  })

  it('only follows next= to portal paths (no open redirect)', async () => {
    const { key } = await tenant()
    for (const next of ['https://evil.example/', '//evil.example/portal', '/api/episodes', '/portal\\@evil.example']) {
      expect((await login(key, { origin: ORIGIN }, next)).headers.get('location')).toBe('/portal/episodes')
    }
  })

  it('signs out by deleting the cookie', async () => {
    const reply = await app.request(`${ORIGIN}/portal/logout`, { method: 'POST', headers: { origin: ORIGIN } })
    expect(reply.status).toBe(303)
    expect(reply.headers.get('location')).toBe('/portal/login')
    expect(reply.headers.get('set-cookie')).toMatch(/^episodic_session=; Max-Age=0/)
  })
})

describe('sessions', () => {
  it('stop working when the key is revoked, when they expire, or when tampered with', async () => {
    const t = await tenant()
    const cookie = await session(t.key)
    expect((await page('/portal/episodes', cookie)).status).toBe(200)
    const [name, value] = cookie.split('=') as [string, string]
    const parts = value.split('.')
    const forged = [...parts.slice(0, 3), String(Number(parts[3]) + 3600), parts[4]].join('.')
    expect((await page('/portal/episodes', `${name}=${forged}`)).status).toBe(302)
    expect((await page('/portal/episodes', `${name}=${value}x`)).status).toBe(302)

    offset = (SESSION_TTL_SECONDS + 1) * 1000
    expect((await page('/portal/episodes', cookie)).status).toBe(302)
    offset = 0

    await revokeKey(app.deps, t.keyId)
    expect((await page('/portal/episodes', cookie)).headers.get('location')).toBe('/portal/login?next=%2Fportal%2Fepisodes')
    expect((await page('/api/episodes', cookie)).status).toBe(401)
  })

  it('are accepted by the read endpoints and the artifact route, never by writes', async () => {
    const t = await tenant()
    const other = await tenant()
    const cookie = await session(t.key)
    const opened = await (await api('/api/ingest/episode', t.key, { request_uploads: ['video'] })).json() as {
      episode_id: string
      upload_urls: Array<{ url: string }>
    }
    await app.request(opened.upload_urls[0]!.url, { method: 'PUT', body: 'mp4 bytes', headers: { 'content-type': 'video/mp4', 'content-length': '9' } })
    const foreign = await episode(other.key)

    const list = await page('/api/episodes', cookie)
    expect(list.status).toBe(200)
    expect(((await list.json()) as { items: Array<{ episode_id: string }> }).items.map((e) => e.episode_id)).toEqual([opened.episode_id])
    expect((await page('/api/eval-runs', cookie)).status).toBe(200)
    expect((await page(`/api/episodes/${foreign}`, cookie)).status).toBe(404)
    const artifact = await page(`/api/episodes/${opened.episode_id}/artifact/video?redirect=1`, cookie)
    expect(artifact.status).toBe(302)
    const stored = await app.request(artifact.headers.get('location')!)
    expect(stored.headers.get('content-type')).toBe('video/mp4')
    expect(await stored.text()).toBe('mp4 bytes')
    expect((await page(`/api/episodes/${foreign}/artifact/video`, cookie)).status).toBe(404)

    const write = await app.request(`${ORIGIN}/api/ingest/episode`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' })
    expect(write.status).toBe(401)
    // A key header wins over the cookie: a bad key is a 401 even with a good session.
    expect((await app.request(`${ORIGIN}/api/episodes`, { headers: { cookie, authorization: 'Bearer epk_bad' } })).status).toBe(401)
    // A Basic Authorization is no key (a proxy's gate the browser answers on every request): the session still reads.
    expect((await app.request(`${ORIGIN}/api/episodes`, { headers: { cookie, authorization: 'Basic dXNlcjpwYXNz' } })).status).toBe(200)
  })

  it('are refused by every ingest route, GETs included (resuming a multipart upload mints upload URLs)', async () => {
    const t = await tenant()
    const cookie = await session(t.key)
    const id = await episode(t.key, { request_uploads: ['actions'] })
    const created = await api(`/api/ingest/episode/${id}/multipart`, t.key, { kind: 'actions', size: 6_000_000 })
    expect(created.status).toBe(201)
    const { upload_id } = (await created.json()) as { upload_id: string }
    const resume = `/api/ingest/episode/${id}/multipart/${upload_id}`
    expect((await api(resume, t.key)).status).toBe(200)
    const bySession = await page(resume, cookie)
    expect(bySession.status).toBe(401)
    expect(bySession.headers.get('www-authenticate')).toBe('Bearer realm="service"')
    expect(await bySession.json()).toEqual({ error: 'missing or invalid API key' })
    expect((await app.request(`${ORIGIN}${resume}`, { method: 'HEAD', headers: { cookie } })).status).toBe(401)
  })
})

describe('pages', () => {
  it('list the client’s episodes newest first with filters, cursor pages and the name fallback', async () => {
    const t = await tenant()
    const other = await tenant()
    const cookie = await session(t.key)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push(await episode(t.key, { source: i === 1 ? 'sim' : 'real', robot: 'arm-1', name: i === 2 ? 'pick-0003' : undefined }))
    await episode(other.key, { name: 'rival-episode' })

    const html = await (await page('/portal/episodes?source=&status=&robot=&policy_version=', cookie)).text()
    expect(html).toContain('pick-0003')
    expect(html).toContain(`episode_${ids[0]!.slice(0, 8)}`)
    expect(html).not.toContain('rival-episode')
    expect(html.indexOf('pick-0003')).toBeLessThan(html.indexOf(`episode_${ids[0]!.slice(0, 8)}`))
    const sims = await (await page('/portal/episodes?source=sim', cookie)).text()
    expect(sims).toContain(`/portal/episodes/${ids[1]}`)
    expect(sims).not.toContain(`/portal/episodes/${ids[0]}`)
    const first = await (await page('/portal/episodes?limit=2', cookie)).text()
    const next = /href="(\/portal\/episodes\?limit=2&amp;cursor=[^"]+)"/.exec(first)?.[1]
    expect(next).toBeDefined()
    expect(await (await page(next!.replace(/&amp;/g, '&'), cookie)).text()).toContain(`/portal/episodes/${ids[0]}`)
    const bad = await page('/portal/episodes?source=dream', cookie)
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain('source')
    // A bad filter keeps the page and the form as typed, naming the field by its label.
    const date = await page('/portal/episodes?robot=arm-7&created_after=yesterday', cookie)
    const dateHtml = await date.text()
    expect(date.status).toBe(400)
    expect(dateHtml).toMatch(/<p class="error-box" role="alert" id="filter-error">created from: [^<]+<\/p>/)
    expect(dateHtml).toContain('<form class="filters"')
    expect(dateHtml).toContain('value="arm-7"')
    expect(dateHtml).toContain('value="yesterday"')
    const words = await (await page('/portal/episodes?metadata=justaword', cookie)).text()
    expect(words).toContain('metadata: &quot;justaword&quot; is not key=value')
    expect(words).toContain('value="justaword"')
    const trend = await page('/portal/trends?baseline_policy_version=v1&created_after=soon', cookie)
    expect(trend.status).toBe(400)
    expect(await trend.text()).toMatch(/id="filter-error">created from: /)
  })

  it('answer 404 for another client’s, unknown and malformed ids', async () => {
    const t = await tenant()
    const other = await tenant()
    const cookie = await session(t.key)
    const foreign = await episode(other.key)
    const base = await episode(other.key)
    const run = (await (await api('/api/ingest/eval-run', other.key, { candidate_policy_version: 'c', baseline_episode_ids: [base] })).json()) as {
      eval_run_id: string
    }
    const paths = [
      `/portal/episodes/${foreign}`,
      '/portal/episodes/0b5e0000-0000-4000-8000-000000000000',
      '/portal/episodes/nope',
      `/portal/eval-runs/${run.eval_run_id}`,
      '/portal/eval-runs/nope',
      '/portal/nothing',
    ]
    const bodies = new Set<string>()
    for (const path of paths) {
      const reply = await page(path, cookie)
      expect(reply.status).toBe(404)
      bodies.add(await reply.text())
    }
    expect(bodies.size).toBe(1)
  })

  it('show metadata as escaped text, never as markup', async () => {
    const t = await tenant()
    const cookie = await session(t.key)
    const id = await episode(t.key, { name: '<img src=x onerror=alert(1)>', metadata: { note: '<script>window.__xss=1</script>', '"><b>': "'" } })
    const reply = await page(`/portal/episodes/${id}`, cookie)
    const html = await reply.text()
    expect(html).not.toContain('<script')
    expect(html).not.toContain('<img src=x')
    expect(html).toContain('&lt;script&gt;window.__xss=1&lt;/script&gt;')
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(reply.headers.get('cache-control')).toBe('no-store')
  })

  it('show an eval run: pending, then finalized with rollup, chart, result links and errors', async () => {
    const t = await tenant()
    const cookie = await session(t.key)
    const [a, b] = [await episode(t.key, { name: 'base-a' }), await episode(t.key)]
    const replay = await episode(t.key, { source: 'replay', name: 'replay-a' })
    const run = ((await (await api('/api/ingest/eval-run', t.key, {
      candidate_policy_version: 'cand-v2',
      baseline_policy_version: 'base-v1',
      baseline_episode_ids: [a, b],
      metadata: { build: '<script>x</script>' },
    })).json()) as { eval_run_id: string }).eval_run_id
    const pending = await (await page(`/portal/eval-runs/${run}`, cookie)).text()
    expect(pending).toContain('Not finalized yet')
    expect(pending).toContain(`<code>episodic replay run --resume ${run} --policy ...</code>`)
    expect(pending).toContain('&lt;script&gt;x&lt;/script&gt;')

    const metrics = {
      success_baseline: false,
      success_candidate: true,
      reward_total_baseline: 3,
      reward_total_candidate: 7.5,
      collision_count_baseline: 1,
      collision_count_candidate: 0,
    }
    await api(`/api/ingest/eval-run/${run}/result`, t.key, { baseline_episode_id: a, status: 'done', replay_episode_id: replay, metrics })
    await api(`/api/ingest/eval-run/${run}/result`, t.key, { baseline_episode_id: b, status: 'failed', error: 'ValueError: <bad> shape' })
    await api(`/api/ingest/eval-run/${run}/finalize`, t.key, {})

    const html = await (await page(`/portal/eval-runs/${run}`, cookie)).text()
    expect(html).not.toContain('Not finalized yet')
    expect(html).toContain('cand-v2')
    expect(html).toContain('base-v1')
    expect(html).toMatch(/id="recommendation">HOLD</)
    expect(html).toMatch(/id="verdict">HOLD</)
    expect(html).toContain('<li>1 episode failed (the policy raised or the replay broke); a failed episode blocks ship.</li>')
    expect(html).toContain('Replay is open-loop')
    // One pair is no interval: the point estimate shows, the mark does not claim better.
    expect(html).toMatch(/data-metric="reward_mean">.*?>3<.*?>7\.5<.*?>\+4\.5<.*?data-label="n">1<.*?no clear change/s)
    expect(html).toMatch(/data-metric="collision_rate">.*?>100%<.*?>0%<.*?>-100 pp<.*?no clear change/s)
    expect(html).toMatch(/data-metric="ood_action_share">.*?n\/a/s)
    expect(html).not.toContain('reported by the policy') // these blobs carry no outcome_source
    expect(html).toContain('id="action-divergence"')
    expect(html).toContain('class="episode failed"') // the failed row is marked on the chart
    expect(html).toContain('<svg class="chart"')
    expect(html).toContain('#1 base-a: baseline 3, candidate 7.5')
    expect(html).toContain(`href="/portal/episodes/${a}" class="baseline-link">base-a<`)
    expect(html).toContain(`href="/portal/episodes/${replay}" class="replay-link">replay-a<`)
    expect(html).toContain('ValueError: &lt;bad&gt; shape')
    const list = await (await page('/portal/eval-runs', cookie)).text()
    expect(list).toContain(`/portal/eval-runs/${run}`)
    expect(list).toContain('r-hold')

    // Gzipped when the browser asks, the same page once inflated; as it is otherwise.
    const zipped = await app.request(`${ORIGIN}/portal/eval-runs/${run}`, { headers: { cookie, 'accept-encoding': 'gzip, deflate, br' } })
    expect([zipped.status, zipped.headers.get('content-encoding'), zipped.headers.get('vary')]).toEqual([200, 'gzip', 'Accept-Encoding'])
    expect(await new Response(zipped.body!.pipeThrough(new DecompressionStream('gzip'))).text()).toBe(html)
    expect((await page(`/portal/eval-runs/${run}`, cookie)).headers.get('content-encoding')).toBeNull()

    // The list's filter form: the API's parameters, kept as typed; a bad value keeps the page and names the field.
    const other = ((await (await api('/api/ingest/eval-run', t.key, { candidate_policy_version: 'cand-v3', baseline_episode_ids: [a] })).json()) as {
      eval_run_id: string
    }).eval_run_id
    const v2 = await (await page('/portal/eval-runs?candidate_policy_version=cand-v2&status=completed', cookie)).text()
    expect(v2).toContain(`/portal/eval-runs/${run}"`)
    expect(v2).not.toContain(`/portal/eval-runs/${other}"`)
    expect(v2).toContain('<form class="filters"')
    expect(v2).toContain('value="cand-v2"')
    expect(v2).toContain('<option value="completed" selected="">completed</option>')
    const none = await (await page('/portal/eval-runs?candidate_policy_version=cand-v3&status=completed', cookie)).text()
    expect(none).toContain('No eval runs match these filters.')
    const bad = await page('/portal/eval-runs?baseline_policy_version=base-v1&created_before=later', cookie)
    const badHtml = await bad.text()
    expect(bad.status).toBe(400)
    expect(badHtml).toMatch(/<p class="error-box" role="alert" id="filter-error">created before: [^<]+<\/p>/)
    expect(badHtml).toContain('value="base-v1"')
    expect(badHtml).toContain('value="later"')
  })
})
