/**
 * The portal's webhooks page through `app.request()`: each endpoint of the
 * signed-in client with its deliveries' status, attempts and last error;
 * nothing of other clients, never the secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createKey } from '../admin/admin.ts'
import { createApp, type EpisodicApp } from '../app.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import { deliverWebhooks } from '../webhooks/deliver.ts'
import { addWebhook } from '../webhooks/endpoints.ts'

const ORIGIN = 'http://portal.test'
let app: EpisodicApp

beforeAll(async () => {
  app = createApp({ db: await openTestDatabase(), sessionSecret: 'a-test-session-secret-of-32-chars!!', logger: { error: () => {} } })
})
afterAll(() => app.deps.db.destroy())

async function tenant(name: string) {
  await createClient(app.deps, name)
  const { key } = await createKey(app.deps, name)
  const login = await app.request(`${ORIGIN}/portal/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ api_key: key }).toString(),
  })
  return { key, cookie: login.headers.get('set-cookie')!.split(';')[0]! }
}

async function api(path: string, key: string, body: unknown) {
  const reply = await app.request(`${ORIGIN}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return (await reply.json()) as any
}

describe('portal webhooks page', () => {
  it("lists the client's endpoints with each delivery's status, attempts and last error", async () => {
    const lab = await tenant('lab')
    const rival = await tenant('rival')
    const quiet = await addWebhook(app.deps, 'lab', 'https://quiet.example/hook')
    const hook = await addWebhook(app.deps, 'lab', 'https://ci.example/hook?a=1&b=<x>')
    await addWebhook(app.deps, 'rival', 'https://rival.example/secret-hook')

    const page = async (cookie: string) => (await app.request(`${ORIGIN}/portal/webhooks`, { headers: { cookie } })).text()
    expect(await page(lab.cookie)).toContain('No deliveries yet')

    const episode = await api('/api/ingest/episode', lab.key, { request_uploads: [] })
    const run = await api('/api/ingest/eval-run', lab.key, { candidate_policy_version: 'v2', baseline_episode_ids: [episode.episode_id] })
    await api(`/api/ingest/eval-run/${run.eval_run_id}/finalize`, lab.key, {})
    // One endpoint answers 502, the other is never reached.
    const report = await deliverWebhooks({
      db: app.deps.db,
      fetch: (
        url,
      ) => (url.startsWith('https://ci.')
        ? Promise.resolve(new Response('upstream down', { status: 502 }))
        : Promise.reject(new Error('connect ECONNREFUSED'))),
    })
    expect(report).toMatchObject({ attempted: 2, retrying: 2 })

    const html = await page(lab.cookie)
    expect(html).toContain(hook.webhook_id)
    expect(html).toContain(quiet.webhook_id)
    expect(html).toContain('https://ci.example/hook?a=1&amp;b=%3Cx%3E')
    expect(html).toContain('HTTP 502: upstream down')
    expect(html).toContain('connect ECONNREFUSED')
    expect(html).toContain(`/portal/eval-runs/${run.eval_run_id}`)
    expect(html).toMatch(/<span class="badge s-pending">pending<\/span>/)
    expect(html).toMatch(/data-label="attempts">1</)
    expect(html).not.toContain('whsec_')
    expect(html).not.toContain('rival.example')
    expect(html).toContain('<a href="/portal/webhooks" aria-current="page">Webhooks</a>')

    const theirs = await page(rival.cookie)
    expect(theirs).toContain('rival.example/secret-hook')
    expect(theirs).not.toContain(hook.webhook_id)
  })

  it('needs a session', async () => {
    const reply = await app.request(`${ORIGIN}/portal/webhooks`)
    expect(reply.status).toBe(302)
    expect(reply.headers.get('location')).toBe('/portal/login?next=%2Fportal%2Fwebhooks')
  })
})
