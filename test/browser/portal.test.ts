/**
 * The portal in a real browser (Debian's Chromium through playwright-core)
 * against the service as users run it (Node adapter, real HTTP, PGlite,
 * built-in object store). Data is made through the API; the browser signs in
 * with an API key, lists, opens an episode (its video plays) and an eval run,
 * follows artifact links, and signs out. Also: metadata with a `<script>`
 * stays text, pages fit a phone, nothing is fetched from another origin, and
 * a screenshot of the eval-run page lands in test-artifacts/ and is checked
 * not to be blank.
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { call } from '../helpers/http.ts'
import { startService, type TestService } from '../helpers/service.ts'
import { describeWithChromium, launchChromium } from './chromium.ts'
import { TINY_MP4 } from './fixtures.ts'

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts')
const XSS = '<script>window.__xss=1</script>'

describeWithChromium('portal in Chromium', () => {
  let svc: TestService
  let browser: Browser
  let key: string
  let foreignEpisode: string
  const ids = {} as { pick: string; unnamed: string; sim: string; xss: string; replay: string; run: string; pendingRun: string }
  const offOrigin: string[] = []

  const post = async (path: string, body: unknown, k = key) => {
    const reply = await call(`${svc.url}${path}`, { key: k, body })
    if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${reply.text}`)
    return reply.body
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    svc = await startService('pglite')
    key = (await svc.newTenant('lab')).key
    const rival = (await svc.newTenant('rival')).key

    const pick = await post('/api/ingest/episode', {
      name: 'pick-0001',
      robot: 'arm-1',
      policy_version: 'base-v1',
      env_version: 'env-3',
      git_sha: 'abc1234',
      seed: 42,
      fps: 5,
      request_uploads: ['video', 'actions'],
      metadata: { success: true, reward_total: 10, operator: 'ada' },
    })
    for (const [kind, body, type] of [['video', TINY_MP4, 'video/mp4'], ['actions', 'npz bytes', 'application/octet-stream']] as const) {
      const url = pick.upload_urls.find((u: { kind: string }) => u.kind === kind).url
      const put = await fetch(url, { method: 'PUT', body, headers: { 'content-type': type } })
      expect(put.status).toBe(200)
    }
    await post(`/api/ingest/episode/${pick.episode_id}/finalize`, { duration_s: 1, bytes_total: TINY_MP4.length + 9 })
    ids.pick = pick.episode_id
    ids.unnamed =
      (await post('/api/ingest/episode', { robot: 'arm-2', policy_version: 'base-v1', request_uploads: [], metadata: { success: false, reward_total: 4 } }))
        .episode_id
    ids.sim = (await post('/api/ingest/episode', { name: 'sim-run', source: 'sim', request_uploads: [] })).episode_id
    ids.xss = (await post('/api/ingest/episode', { name: '<img src=x onerror="window.__xss=2">', request_uploads: [], metadata: { note: XSS } })).episode_id
    foreignEpisode = (await post('/api/ingest/episode', { name: 'rival-secret', request_uploads: [] }, rival)).episode_id

    const run = await post('/api/ingest/eval-run', {
      candidate_policy_version: 'cand-v2',
      baseline_policy_version: 'base-v1',
      name: 'nightly cand-v2',
      baseline_episode_ids: [ids.pick, ids.unnamed, ids.sim],
      metadata: { build: 'https://ci.example/builds/7' },
    })
    ids.run = run.eval_run_id
    ids.replay = (await post('/api/ingest/episode', {
      source: 'replay',
      policy_version: 'cand-v2',
      request_uploads: [],
      metadata: { eval_run_id: ids.run, baseline_episode_id: ids.pick },
    })).episode_id
    const blob = (b: number, c: number, success: [boolean, boolean]) => ({
      steps: 50,
      reward_total_baseline: b,
      reward_total_candidate: c,
      success_baseline: success[0],
      success_candidate: success[1],
      collision_count_baseline: 1,
      collision_count_candidate: 0,
      time_to_goal_s_baseline: 12,
      time_to_goal_s_candidate: 10.5,
      action_l2_mean: 0.2,
    })
    await post(`/api/ingest/eval-run/${ids.run}/result`, {
      baseline_episode_id: ids.pick,
      status: 'done',
      replay_episode_id: ids.replay,
      metrics: blob(10, 12.5, [true, true]),
    })
    await post(`/api/ingest/eval-run/${ids.run}/result`, { baseline_episode_id: ids.unnamed, status: 'done', metrics: blob(4, 3, [false, true]) })
    await post(`/api/ingest/eval-run/${ids.run}/result`, {
      baseline_episode_id: ids.sim,
      status: 'failed',
      error: 'Traceback (most recent call last):\nValueError: action shape (7,) != (6,)',
    })
    await post(`/api/ingest/eval-run/${ids.run}/finalize`, {})
    ids.pendingRun = (await post('/api/ingest/eval-run', { candidate_policy_version: 'cand-v3', baseline_episode_ids: [ids.pick] })).eval_run_id

    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
    await svc?.close()
  })

  async function newContext(options: { bypassCSP?: boolean; viewport?: { width: number; height: number } } = {}): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 }, bypassCSP: options.bypassCSP })
    context.setDefaultTimeout(15_000)
    context.on('request', (request) => {
      if (!request.url().startsWith(svc.url) && !request.url().startsWith('data:')) offOrigin.push(request.url())
    })
    return context
  }

  async function signIn(page: Page, path = '/portal'): Promise<void> {
    await page.goto(`${svc.url}${path}`)
    expect(new URL(page.url()).pathname).toBe('/portal/login')
    await page.fill('input[name=api_key]', key)
    await Promise.all([page.waitForURL((url) => url.pathname !== '/portal/login'), page.click('button[type=submit]')])
  }

  it('signs in from the link `replay run` prints, shows the run, and saves a non-blank screenshot', async () => {
    const context = await newContext()
    const page = await context.newPage()
    await signIn(page, `/portal/eval-runs/${ids.run}`)
    expect(page.url()).toBe(`${svc.url}/portal/eval-runs/${ids.run}`)

    const [cookie] = await context.cookies()
    expect(cookie).toMatchObject({ name: 'episodic_session', httpOnly: true, sameSite: 'Lax', secure: false, path: '/' })
    const hours = (cookie!.expires * 1000 - Date.now()) / 3_600_000
    expect(hours).toBeGreaterThan(11.9)
    expect(hours).toBeLessThanOrEqual(12)
    expect(await page.evaluate(() => document.cookie)).toBe('') // HttpOnly: invisible to scripts

    await expect.poll(() => page.textContent('h1'), { timeout: 60_000 }).toBe('nightly cand-v2')
    const header = await page.textContent('dl.fields')
    for (const text of ['cand-v2', 'base-v1', 'completed', 'created_at']) expect(header).toContain(text)
    expect(await page.textContent('#recommendation')).toBe('HOLD') // a failed row blocks ship
    expect(await page.textContent('#reasons')).toContain('1 episode failed')
    const reward = await page.locator('#rollup tr[data-metric=reward_mean] td').allTextContents()
    // Two pairs (+2.5 and -1): the interval crosses zero, so no claim of better.
    expect(reward.slice(1, 4)).toEqual(['7', '7.75', '+0.75'])
    expect(reward[4]).toMatch(/^95% interval .* to .*-1 … \+2\.5$/)
    expect(reward.slice(5)).toEqual(['2', '~ no clear change'])
    expect(await page.locator('#rollup tr[data-metric=reward_mean] svg.errorbar').count()).toBe(1)
    expect(await page.locator('#rollup tr[data-metric=success_rate] td').last().textContent()).toBe('~ no clear change')
    expect(await page.locator('#rollup tr[data-metric=ood_action_share] td').last().textContent()).toBe('n/a')

    const chart = page.locator('svg.chart')
    expect((await chart.boundingBox())!.width).toBeGreaterThan(600)
    expect(await chart.locator('g.episode').count()).toBe(3) // two done, one failed (marked)
    expect(await chart.locator('g.episode.failed path.failed-mark').count()).toBe(1)
    expect(await page.locator('#results tr[data-status=failed] pre.error').textContent()).toContain('ValueError: action shape (7,) != (6,)')
    expect(await page.locator('#results a.replay-link').getAttribute('href')).toBe(`/portal/episodes/${ids.replay}`)
    expect(await page.textContent('#metadata')).toContain('https://ci.example/builds/7')

    const file = join(ARTIFACTS, 'portal-eval-run.png')
    const png = await page.screenshot({ path: file, fullPage: true })
    expect(statSync(file).size).toBeGreaterThan(20_000)
    // Decode the PNG in the browser and count colours: a blank page has one or two.
    const stats = await page.evaluate(async (b64) => {
      const img = new Image()
      img.src = `data:image/png;base64,${b64}`
      await img.decode()
      const canvas = document.createElement('canvas')
      canvas.width = img.width
      canvas.height = img.height
      const ctx = canvas.getContext('2d')!
      ctx.drawImage(img, 0, 0)
      const data = ctx.getImageData(0, 0, img.width, img.height).data
      const colours = new Set<number>()
      for (let i = 0; i < data.length; i += 4 * 7) colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!)
      return { width: img.width, height: img.height, colours: colours.size }
    }, png.toString('base64'))
    expect(stats.width).toBe(1280)
    expect(stats.height).toBeGreaterThan(900)
    expect(stats.colours).toBeGreaterThan(20)

    // The pending run says so instead of showing a rollup.
    await page.goto(`${svc.url}/portal/eval-runs`)
    await Promise.all([page.waitForURL(`**/portal/eval-runs/${ids.pendingRun}`), page.click(`a[href="/portal/eval-runs/${ids.pendingRun}"]`)])
    expect(await page.textContent('#not-finalized')).toContain('Not finalized yet')
    expect(await page.locator('#rollup').count()).toBe(0)
    await context.close()
  })

  it('lists and filters episodes, opens one, plays its video, follows artifact links, signs out', async () => {
    const context = await newContext()
    const page = await context.newPage()
    await signIn(page)
    expect(new URL(page.url()).pathname).toBe('/portal/episodes')
    const names = await page.locator('tbody tr td:first-child').allTextContents()
    expect(names.slice(-4)).toEqual(['<img src=x onerror="window.__xss=2">', 'sim-run', `episode_${ids.unnamed.slice(0, 8)}`, 'pick-0001'])
    expect(names).not.toContain('rival-secret')
    await page.screenshot({ path: join(ARTIFACTS, 'portal-episodes.png'), fullPage: true })

    await page.selectOption('select[name=source]', 'sim')
    await Promise.all([page.waitForURL(/source=sim/), page.click('form.filters button[type=submit]')])
    expect(await page.locator('tbody tr td:first-child').allTextContents()).toEqual(['sim-run'])
    await Promise.all([page.waitForURL(`${svc.url}/portal/episodes`), page.click('a:text("Clear")')])
    await page.fill('input[name=robot]', 'arm-2')
    await Promise.all([page.waitForURL(/robot=arm-2/), page.press('input[name=robot]', 'Enter')])
    expect(await page.locator('tbody tr td:first-child').allTextContents()).toEqual([`episode_${ids.unnamed.slice(0, 8)}`])

    await page.goto(`${svc.url}/portal/episodes`)
    await Promise.all([page.waitForURL(`**/portal/episodes/${ids.pick}`), page.click('a:text("pick-0001")')])
    expect(page.url()).toBe(`${svc.url}/portal/episodes/${ids.pick}`)
    const fields = await page.textContent('dl.fields')
    for (const text of [ids.pick, 'arm-1', 'base-v1', 'env-3', 'abc1234', '42', 'ready']) expect(fields).toContain(text)
    expect(await page.textContent('#metadata')).toContain('"operator": "ada"')

    // The video plays: metadata loads through the artifact route and time advances.
    await page.waitForFunction(() => (document.querySelector('video')?.readyState ?? 0) >= 1, null, { timeout: 60_000 })
    expect(await page.evaluate(() => document.querySelector('video')!.duration)).toBeCloseTo(1, 0)
    await page.evaluate(() => {
      const video = document.querySelector('video')!
      video.muted = true
      return video.play()
    })
    await page.waitForFunction(() => document.querySelector('video')!.currentTime > 0, null, { timeout: 60_000 })
    await page.screenshot({ path: join(ARTIFACTS, 'portal-episode.png'), fullPage: true })

    // Artifact links: the browser follows the route's redirect to the signed URL.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a.artifact[data-kind=actions]')])
    expect(readFileSync((await download.path())!, 'utf8')).toBe('npz bytes')
    const href = `${svc.url}${await page.getAttribute('a.artifact[data-kind=video]', 'href')}`
    const video = await page.goto(href)
    expect([200, 206]).toContain(video!.status()) // Chromium's media document asks for a byte range, which the store now serves
    expect(video!.url()).toContain('/storage/')
    expect(video!.headers()['content-type']).toBe('video/mp4')
    // (Chromium does not keep a media document's body; read the bytes with the context's cookies.)
    const bytes = await (await context.request.get(href)).body()
    expect(new Uint8Array(bytes)).toEqual(TINY_MP4)

    // Another client's episode is not found, like in the API.
    expect((await page.goto(`${svc.url}/portal/episodes/${foreignEpisode}`))!.status()).toBe(404)
    expect((await page.goto(`${svc.url}/api/episodes/${foreignEpisode}/artifact/video?redirect=1`))!.status()).toBe(404)

    await page.goto(`${svc.url}/portal/episodes`)
    await Promise.all([page.waitForURL(/\/portal\/login$/), page.click('button:text("Sign out")')])
    expect(await context.cookies()).toEqual([])
    await page.goto(`${svc.url}/portal/episodes`)
    expect(new URL(page.url()).pathname).toBe('/portal/login')
    expect((await page.goto(`${svc.url}/api/episodes/${ids.pick}/artifact/video?redirect=1`))!.status()).toBe(401)
    await context.close()
  })

  it('shows a <script> in metadata as text and never runs it (CSP bypassed: escaping alone holds)', async () => {
    const context = await newContext({ bypassCSP: true })
    const page = await context.newPage()
    const dialogs: string[] = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    await signIn(page, `/portal/episodes/${ids.xss}`)
    expect(await page.textContent('#metadata')).toContain(XSS)
    expect(await page.textContent('h1')).toBe('<img src=x onerror="window.__xss=2">')
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined()
    expect(await page.locator('script, img').count()).toBe(0)
    await page.goto(`${svc.url}/portal/episodes`)
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined()
    expect(dialogs).toEqual([])
    await context.close()
  })

  it('fits a phone screen and fetches nothing from another origin', async () => {
    const context = await newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    await signIn(page)
    const pages = { episodes: '/portal/episodes', episode: `/portal/episodes/${ids.pick}`, 'eval-run': `/portal/eval-runs/${ids.run}` }
    for (const [name, path] of Object.entries(pages)) {
      await page.goto(`${svc.url}${path}`)
      // Tables turn into stacked rows; the page itself never scrolls sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
      await page.screenshot({ path: join(ARTIFACTS, `portal-phone-${name}.png`), fullPage: true })
    }
    await context.close()
    expect(offOrigin).toEqual([])
  })
})
