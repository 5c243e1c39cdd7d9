/**
 * The trend page in Chromium: three completed eval runs against one baseline
 * version, oldest first on every metric's chart, each point a link that
 * opens its run; the run page links back to its trend.
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { call } from '../helpers/http.ts'
import { startService, type TestService } from '../helpers/service.ts'
import { describeWithChromium, launchChromium, signIn } from './chromium.ts'

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts')

describeWithChromium('trend page in Chromium', () => {
  let svc: TestService
  let browser: Browser
  let key: string
  const runs: string[] = []

  const post = async (path: string, body: unknown) => {
    const reply = await call(`${svc.url}${path}`, { key, body })
    if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${reply.text}`)
    return reply.body
  }

  beforeAll(async () => {
    svc = await startService('pglite')
    key = (await svc.newTenant('trender')).key
    const baselines: string[] = []
    for (let i = 0; i < 3; i++) baselines.push((await post('/api/ingest/episode', { name: `base-${i}`, request_uploads: [] })).episode_id)
    for (const [n, gain] of [[2, 1], [3, 2.5], [4, -0.5]] as const) {
      const run = await post('/api/ingest/eval-run', {
        name: `nightly v${n}`,
        candidate_policy_version: `v${n}`,
        baseline_policy_version: 'v1',
        baseline_episode_ids: baselines,
      })
      for (const [i, id] of baselines.entries()) {
        await post(`/api/ingest/eval-run/${run.eval_run_id}/result`, {
          baseline_episode_id: id,
          status: 'done',
          metrics: { steps: 10, reward_total_baseline: 10 + i, reward_total_candidate: 10 + i + gain, success_baseline: true, success_candidate: gain > 0 },
        })
      }
      await post(`/api/ingest/eval-run/${run.eval_run_id}/finalize`, {})
      runs.push(run.eval_run_id)
      svc.advance(60_000)
    }
    // Another lineage, which the page must leave out.
    await post('/api/ingest/eval-run', { candidate_policy_version: 'x', baseline_policy_version: 'other', baseline_episode_ids: baselines })
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
    await svc?.close()
  })

  async function open(path: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
    context.setDefaultTimeout(30_000)
    const page = await context.newPage()
    await signIn(page, svc.url, key, path)
    return page
  }

  it('draws each metric across the runs in time order, and a point opens its run', async () => {
    const page = await open(`/portal/eval-runs/${runs[1]}`)
    await Promise.all([page.waitForURL((url) => url.pathname === '/portal/trends'), page.click('#trend-link')])
    expect(new URL(page.url()).searchParams.get('baseline_policy_version')).toBe('v1')
    const reward = page.locator('#trend-reward_mean svg g.point')
    expect(await reward.count()).toBe(3)
    expect(await reward.evaluateAll((gs) => gs.map((g) => g.getAttribute('data-delta')))).toEqual(['1', '2.5', '-0.5'])
    const hrefs = await reward.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')))
    expect(hrefs).toEqual(runs.map((id) => `/portal/eval-runs/${id}`))
    expect(await page.locator('section.trend').count()).toBe(5)
    expect(await page.locator('#trend-runs tbody tr').count()).toBe(3)
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'portal-trends.png'), fullPage: true })

    await Promise.all([page.waitForURL((url) => url.pathname === `/portal/eval-runs/${runs[2]}`), reward.nth(2).locator('circle').click()])
    expect(await page.textContent('h1')).toBe('nightly v4')
  })

  it('asks for a lineage when none is given', async () => {
    const page = await open('/portal/trends')
    expect(await page.textContent('p.sub')).toContain('Choose a baseline version')
    expect(await page.locator('section.trend').count()).toBe(0)
  })
}, 120_000)
