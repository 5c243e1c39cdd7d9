/**
 * The result page of an eval run in Chromium: with `uploadActions` (the
 * library side of `episodic replay run --upload-actions`) the candidate's
 * actions are drawn beside the baseline's per key, with the values the
 * policy returned; without it the page says how to get them. A stored policy
 * error shows without the runner's local paths.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { EpisodicClient } from '../../src/client/client.ts'
import { completeRun, createRun } from '../../src/replay/eval-run.ts'
import { runAgainst } from '../../src/replay/run.ts'
import { baselineAction, DOF, recordBaseline, STEPS } from '../helpers/baselines.ts'
import { startService, type TestService } from '../helpers/service.ts'
import { describeWithChromium, launchChromium, signIn } from './chromium.ts'

describeWithChromium('eval-run result page in Chromium', () => {
  let svc: TestService
  let browser: Browser
  let key: string
  const ids = {} as { baseline: string; failing: string; withActions: string; without: string }
  const offset = 0.25
  const policy = (obs: Record<string, unknown>) => {
    const p = obs['/joint_states/position'] as { data: Float64Array }
    return { '/joint_states/position': Array.from(p.data, (v) => v + offset) }
  }

  beforeAll(async () => {
    svc = await startService('pglite')
    key = (await svc.newTenant('replayer')).key
    const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
    ids.baseline = await recordBaseline(client)
    ids.failing = await recordBaseline(client)
    const uploaded = await createRun({ candidatePolicyVersion: 'cand-up', baselineEpisodeIds: [ids.baseline, ids.failing], client })
    let calls = 0
    await runAgainst(uploaded, (obs) => {
      if (++calls > STEPS) throw new Error(`bad action in /home/ada/secret-project/policy.py`)
      return policy(obs)
    }, { uploadActions: true, stderr: () => {} })
    await completeRun(uploaded)
    ids.withActions = uploaded.id!
    const plain = await createRun({ candidatePolicyVersion: 'cand-plain', baselineEpisodeIds: [ids.baseline], client })
    await runAgainst(plain, policy)
    await completeRun(plain)
    ids.without = plain.id!
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

  it("draws the candidate's uploaded actions beside the baseline's, per key", async () => {
    const page = await open(`/portal/eval-runs/${ids.withActions}`)
    await page.click(`#results tr:first-child a.result-link`)
    expect(new URL(page.url()).pathname).toBe(`/portal/eval-runs/${ids.withActions}/results/${ids.baseline}`)
    await page.waitForSelector('#compare-actions[data-state=ready]')
    expect(await page.locator('#candidate-actions-howto').count()).toBe(0)
    const figure = page.locator('#compare-actions figure.plot[data-key="/joint_states/position"]')
    expect(await figure.getAttribute('data-steps')).toBe(String(STEPS))
    const labels = await figure.locator('.u-legend .u-series .u-label').allTextContents()
    expect(labels.slice(1, 5)).toEqual(['baseline [0]', 'candidate [0]', 'baseline [1]', 'candidate [1]'])
    expect(labels.length).toBe(1 + 2 * DOF)
    // Hover step 5 (x = 0.5 s at 10 fps): the legend reads both values of joint 0.
    const over = figure.locator('.u-over')
    const box = (await over.boundingBox())!
    const x = await figure.evaluate((el, t) => {
      const over = el.querySelector('.u-over') as HTMLElement
      return (t / (19 / 10)) * over.clientWidth
    }, 0.5)
    await over.hover({ position: { x, y: box.height / 2 } })
    const values = await figure.locator('.u-legend .u-series .u-value').allTextContents()
    const round = (v: number) => String(Number(v.toPrecision(6)))
    expect(values.slice(1, 3)).toEqual([round(baselineAction(5, 0)), round(baselineAction(5, 0) + offset)])
  })

  it("says how to get the candidate's actions when they were not uploaded, and still draws the baseline's", async () => {
    const page = await open(`/portal/eval-runs/${ids.without}/results/${ids.baseline}`)
    expect(await page.textContent('#candidate-actions-howto')).toContain('--upload-actions')
    await page.waitForSelector('#compare-actions[data-state=ready]')
    const labels = await page.locator('#compare-actions .u-legend .u-series .u-label').allTextContents()
    expect(labels.slice(1)).toEqual(Array.from({ length: DOF }, (_, j) => `baseline [${j}]`))
  })

  it("shows a policy error without the runner's local paths", async () => {
    const page = await open(`/portal/eval-runs/${ids.withActions}`)
    const error = await page.textContent('#results tr[data-status=failed] pre.error')
    expect(error).toContain('bad action in policy.py')
    expect(error).not.toContain('/home/ada')
    const detail = await open(`/portal/eval-runs/${ids.withActions}/results/${ids.failing}`)
    expect(await detail.textContent('#result-error')).not.toContain('secret-project')
    // Uploading was on: the page says the episode failed, not how to turn uploading on.
    expect(await detail.locator('#candidate-actions-howto').count()).toBe(0)
    expect(await detail.textContent('#candidate-actions-none')).toContain('This episode failed during the replay')
  })
}, 180_000)
