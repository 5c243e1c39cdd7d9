/**
 * Reliability over HTTP (issue 16): one case per class of bad, hostile or
 * repeated input, on PGlite and on the real PostgreSQL server. Each answer
 * must be the documented 4xx (never a 500, never a silent change).
 */
import type { KyselyPlugin, RootOperationNode } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../../src/client/client.ts'
import { DATABASES } from '../helpers/databases.ts'
import { call } from '../helpers/http.ts'
import { startService, type TestService } from '../helpers/service.ts'

/** Counts the key lookups (selects from api_keys) the app sends. */
function keyLookupCounter(): KyselyPlugin & { count: number } {
  const counter = {
    count: 0,
    transformQuery(args: { node: RootOperationNode }) {
      const node = args.node as { kind: string; from?: { froms: Array<{ table?: { identifier?: { name?: string } } }> } }
      if (node.kind === 'SelectQueryNode' && node.from?.froms.some((f) => f.table?.identifier?.name === 'api_keys')) counter.count++
      return args.node
    },
    transformResult: (args: { result: any }) => Promise.resolve(args.result),
  }
  return counter
}

describe.each(DATABASES)('reliability over HTTP on %s', (kind) => {
  let svc: TestService
  let key: string
  let otherKey: string
  const lookups = keyLookupCounter()

  beforeAll(async () => {
    // The key cache on, as `episodic serve` runs it (EPISODIC_AUTH_CACHE_MS default 5 s).
    svc = await startService(kind, { plugins: [lookups] })
    key = (await svc.newTenant()).key
    otherKey = (await svc.newTenant()).key
  })
  afterAll(() => svc?.close())

  const url = (path: string) => `${svc.url}${path}`
  /** POSTs JSON text as given (so numbers keep every digit). */
  // Bytes, not a string: fetch would declare a string text/plain.
  const postText = (path: string, text: string, headers: Record<string, string> = { 'content-type': 'application/json' }, k = key) =>
    call(url(path), { method: 'POST', key: k, raw: new TextEncoder().encode(text), headers })
  const post = (path: string, body: unknown, k = key) => call(url(path), { key: k, body })
  const get = (path: string, k = key) => call(url(path), { key: k })

  async function openEpisode(body: Record<string, unknown> = {}): Promise<string> {
    const reply = await post('/api/ingest/episode', { request_uploads: [], ...body })
    expect(reply.status).toBe(201)
    return reply.body.episode_id
  }

  async function portalCookie(k = key): Promise<string> {
    const response = await fetch(url('/portal/login'), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.url },
      body: new URLSearchParams({ api_key: k, next: '/portal/episodes' }),
    })
    await response.body?.cancel()
    expect(response.status).toBe(303)
    return response.headers.get('set-cookie')!.split(';')[0]!
  }

  describe('1. seeds are exact over the signed 64-bit range', () => {
    it.each(['9007199254740993', '-9223372036854775808', '9223372036854775807', '0', '-1'])('%s comes back with every digit', async (seed) => {
      const opened = await postText('/api/ingest/episode', `{"seed": ${seed}, "request_uploads": []}`)
      expect(opened.status).toBe(201)
      const read = await get(`/api/episodes/${opened.body.episode_id}`)
      expect(read.text).toContain(`"seed":${seed},`)
      const listed = await get('/api/episodes?limit=1')
      expect(listed.text).toContain(`"seed":${seed},`)
    })

    it('refuses integers outside the range and non-integers, naming seed', async () => {
      for (const seed of ['9223372036854775808', '-9223372036854775809', '1.5', '"7"', '1e300']) {
        const reply = await postText('/api/ingest/episode', `{"seed": ${seed}}`)
        expect(reply.status, seed).toBe(400)
        expect(reply.body.error).toMatch(/^seed: /)
      }
    })

    it('keeps integers past 2^53 in metadata exact, at open and finalize, in the API, the list and the portal', async () => {
      const big =
        '{"t_ns":1732560000123456789,"serial":-9223372036854775809,"nested":{"ids":[9007199254740993,1]},"small":7,"ratio":0.5,"two63":9223372036854775808,"min":-9223372036854775808,"t256":1732560000123456768}'
      const opened = await postText('/api/ingest/episode', `{"request_uploads": [], "metadata": ${big}}`)
      expect(opened.status).toBe(201)
      const id = opened.body.episode_id as string
      const finalized = await postText(`/api/ingest/episode/${id}/finalize`, '{"status": "ready", "metadata": {"end_ns": 1732560009999999999}}')
      expect(finalized.status, finalized.text).toBe(200)
      for (const text of [(await get(`/api/episodes/${id}`)).text, (await get('/api/episodes?limit=1')).text]) {
        for (
          const digits of [
            '1732560000123456789',
            '-9223372036854775809',
            '[9007199254740993,1]',
            '"small":7',
            '1732560009999999999',
            '"two63":9223372036854775808',
            '"min":-9223372036854775808',
            '"t256":1732560000123456768',
          ]
        ) {
          expect(text, text.slice(0, 400)).toContain(digits)
        }
      }
      const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
      expect((await client.getEpisode(id)).metadata).toMatchObject({ t_ns: 1732560000123456789n, nested: { ids: [9007199254740993n, 1] }, small: 7 })
      const page = await fetch(url(`/portal/episodes/${id}`), { headers: { cookie: await portalCookie() } })
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('1732560000123456789')
    })

    it('round-trips a bigint seed through the client library', async () => {
      const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
      const opened = await client.openEpisode({ seed: -9223372036854775808n, request_uploads: [] })
      expect((await client.getEpisode(opened.episode_id)).seed).toBe(-9223372036854775808n)
      const small = await client.openEpisode({ seed: 42, request_uploads: [] })
      expect((await client.getEpisode(small.episode_id)).seed).toBe(42)
    })
  })

  describe('2. strings PostgreSQL cannot store are a 400 naming the field', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['top-level field', '{"name": "a\\ud800b"}', /^name: .*surrogate/],
      ['metadata value, deep', '{"metadata": {"a": {"b": ["ok", "\\udc00"]}}}', /^metadata\.a\.b\[1\]: .*surrogate/],
      ['metadata key', '{"metadata": {"k\\ud800": 1}}', /^metadata: key .*surrogate/],
      ['\\u0000 in a value', '{"robot": "arm\\u0000"}', /^robot: .*\\u0000/],
      ['\\u0000 in a key', '{"metadata": {"\\u0000": 1}}', /^metadata: key .*\\u0000/],
    ]
    it.each(cases)('%s', async (_what, text, message) => {
      const reply = await postText('/api/ingest/episode', text)
      expect(reply.status).toBe(400)
      expect(reply.body.error).toMatch(message)
    })

    it('in eval-run metadata, the metric blob and finalize metadata', async () => {
      const id = await openEpisode()
      const run = await postText(
        '/api/ingest/eval-run',
        `{"candidate_policy_version": "v2", "baseline_episode_ids": ["${id}"], "metadata": {"git": "\\ud83d"}}`,
      )
      expect(run.status).toBe(400)
      expect(run.body.error).toMatch(/^metadata\.git: .*surrogate/)
      const created = await post('/api/ingest/eval-run', { candidate_policy_version: 'v2', baseline_episode_ids: [id] })
      const result = await postText(
        `/api/ingest/eval-run/${created.body.eval_run_id}/result`,
        `{"baseline_episode_id": "${id}", "status": "done", "metrics": {"notes": "\\udfff"}}`,
      )
      expect(result.status).toBe(400)
      expect(result.body.error).toMatch(/^metrics\.notes: .*surrogate/)
      const finalize = await postText(`/api/ingest/episode/${id}/finalize`, '{"metadata": {"x": "\\ud800"}}')
      expect(finalize.status).toBe(400)
      expect(finalize.body.error).toMatch(/^metadata\.x: /)
    })

    it('stores paired surrogates (emoji) unchanged and counts them as one character', async () => {
      const emoji = '🤖'.repeat(200)
      const id = await openEpisode({ name: emoji, metadata: { robot: '🦾' } })
      const read = await get(`/api/episodes/${id}`)
      expect(read.body.name).toBe(emoji)
      expect(read.body.metadata).toEqual({ robot: '🦾' })
      const tooLong = await post('/api/ingest/episode', { name: '🤖'.repeat(201) })
      expect(tooLong.status).toBe(400)
      expect(tooLong.body.error).toBe('name: must be at most 200 characters')
    })
  })

  describe('3. query parameters', () => {
    const forge = (text: string) => btoa(text).replace(/=+$/, '')
    const someId = '0b3c5a3e-1f0e-4d43-8a57-3b6f5f2e9a10'
    const bad: Array<[string, RegExp]> = [
      ['/api/episodes?robot=arm%00', /^robot: /],
      ['/api/episodes?policy_version=%ED%A0%80', /^policy_version: /],
      ['/api/episodes?robot=%FF', /^robot: /],
      ['/api/eval-runs?cursor=%00', /^cursor: /],
      [`/api/episodes?cursor=${forge(`+010000-01-01T00:00:00.000Z|${someId}`)}`, /^cursor: /],
      [`/api/episodes?cursor=${forge(`0000-01-01T00:00:00.000Z|${someId}`)}`, /^cursor: /],
      [`/api/eval-runs?cursor=${forge(`+010000-01-01T00:00:00.000Z|${someId}`)}`, /^cursor: /],
    ]
    it.each(bad)('API %s -> 400', async (path, message) => {
      const reply = await get(path)
      expect(reply.status).toBe(400)
      expect(reply.body.error).toMatch(message)
    })

    it('the artifact route reads its query as strictly (redirect=%00 -> 400)', async () => {
      const id = await openEpisode({ request_uploads: ['actions'] })
      const reply = await get(`/api/episodes/${id}/artifact/actions?redirect=%00`)
      expect(reply.status).toBe(400)
      expect(reply.body.error).toMatch(/^redirect: /)
      expect((await get(`/api/episodes/${id}/artifact/actions?redirect=1`)).status).toBe(302)
      expect((await get(`/api/episodes/${id}/artifact/actions?redirect=true`)).status).toBe(302)
      expect((await get(`/api/episodes/${id}/artifact/actions?redirect=0`)).status).toBe(200)
      // A value that says neither is refused, not answered with JSON as if redirect were absent.
      for (const query of ['redirect=2', 'redirect=', 'redirect=yes', 'redirct=1']) {
        const refused = await get(`/api/episodes/${id}/artifact/actions?${query}`)
        expect(refused.status).toBe(400)
        expect(refused.body.error).toMatch(query.startsWith('redirct') ? /^redirct: unknown field/ : /^redirect: must be 1 or 0 \(true or false\)/)
      }
    })

    it('the portal answers the same with its error page', async () => {
      const cookie = await portalCookie()
      const portalOnly = [
        '/portal/trends?baseline_policy_version=v1%00',
        '/portal/trends?baseline_policy_version=v1&candidate_policy_version=%00',
        '/portal/trends?baseline_policy_version=%ED%A0%80',
        '/portal/trends?baseline_policy_version=%FF',
        '/portal/episodes?metadata=a%3D%22%5Cu0000%22',
        '/portal/episodes?metadata=a%3D%22%5Cud800%22',
      ]
      for (const path of [...bad.map(([path]) => path.replace('/api/', '/portal/')), ...portalOnly]) {
        const response = await fetch(url(path), { headers: { cookie } })
        const html = await response.text()
        expect(response.status, path).toBe(400)
        // The error page, or for a list filter the list page with its alert (values echoed only when well-formed).
        expect(html, path).toMatch(/Bad request|<p class="error-box" role="alert" id="filter-error">/)
        expect(html.includes('\u0000') || html.includes('\ufffd'), path).toBe(false)
      }
    })
  })

  describe('4. Content-Type', () => {
    it('refuses a body declared as anything but JSON with 415', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
        const reply = await postText('/api/ingest/episode', '{}', { 'content-type': type })
        expect(reply.status, type).toBe(415)
        expect(reply.body.error).toMatch(/Content-Type must be application\/json/)
      }
    })

    it('reads JSON, +json, a charset, or no Content-Type at all', async () => {
      for (
        const headers of [
          { 'content-type': 'application/json; charset=utf-8' },
          { 'content-type': 'application/vnd.episodic+json' },
          {} as Record<string, string>,
        ]
      ) {
        const reply = await postText('/api/ingest/episode', '{"request_uploads": []}', headers)
        expect(reply.status, JSON.stringify(headers)).toBe(201)
      }
    })
  })

  describe('5. unknown key ids cost what known ids cost', () => {
    it('looks an unknown id up once, not on every request', async () => {
      const unknown = `epk_${'q'.repeat(12)}_${'A'.repeat(43)}`
      const wrongSecret = key.slice(0, -43) + 'B'.repeat(43)
      await get('/api/episodes?limit=1', wrongSecret)
      await get('/api/episodes?limit=1', unknown)
      const before = lookups.count
      for (let i = 0; i < 20; i++) {
        expect((await get('/api/episodes?limit=1', unknown)).status).toBe(401)
        expect((await get('/api/episodes?limit=1', wrongSecret)).status).toBe(401)
      }
      expect(lookups.count - before).toBe(0)
    })

    it('answers a flood of random ids with 401 and keeps serving', async () => {
      const random = () => Array.from({ length: 12 }, () => 'abcdefghijklmnopqrstuvwxyz234567'[Math.floor(Math.random() * 32)]).join('')
      const replies = await Promise.all(Array.from({ length: 200 }, () => get('/api/episodes?limit=1', `epk_${random()}_${'C'.repeat(43)}`)))
      expect(new Set(replies.map((r) => r.status))).toEqual(new Set([401]))
      expect((await get('/api/episodes?limit=1')).status).toBe(200)
    })
  })

  describe('7. identical 404s from the artifact route', () => {
    it('answers malformed, unknown, foreign and never-requested the same', async () => {
      const mine = await openEpisode({ request_uploads: ['actions'] })
      const paths = [
        '/api/episodes/not-a-uuid/artifact/actions',
        '/api/episodes/0b3c5a3e-1f0e-4d43-8a57-3b6f5f2e9a10/artifact/actions',
        `/api/episodes/${mine}/artifact/video`,
        `/api/episodes/${mine}/artifact/nonsense`,
      ]
      const replies = await Promise.all([...paths.map((p) => get(p)), get(`/api/episodes/${mine}/artifact/actions`, otherKey)])
      for (const reply of replies) {
        expect(reply.status).toBe(404)
        expect(reply.text).toBe('{"error":"artifact not found"}')
      }
    })
  })

  describe('8. finalizing an eval run again', () => {
    it('returns a byte-identical body', async () => {
      const ids = [await openEpisode({ metadata: { success: true, reward_total: 3 } }), await openEpisode({ metadata: { success: false, reward_total: 1 } })]
      const run = (await post('/api/ingest/eval-run', { candidate_policy_version: 'v2', baseline_episode_ids: ids })).body.eval_run_id
      for (const id of ids) {
        const metrics = {
          steps: 10,
          success_baseline: true,
          success_candidate: true,
          reward_total_baseline: 3,
          reward_total_candidate: 4,
          collision_count_baseline: 0,
          collision_count_candidate: 0,
        }
        expect((await post(`/api/ingest/eval-run/${run}/result`, { baseline_episode_id: id, status: 'done', metrics })).status).toBe(200)
      }
      const first = await post(`/api/ingest/eval-run/${run}/finalize`, {})
      const second = await post(`/api/ingest/eval-run/${run}/finalize`, {})
      expect(first.status).toBe(200)
      expect(second.text).toBe(first.text)
    })
  })

  describe('13. rate limits', () => {
    it('limits portal sign-in per address to 10 tries a minute with 429 and Retry-After', async () => {
      // Its own service: the failed sign-ins above count against this address too.
      const own = await startService(kind)
      const signIn = (apiKey: string) =>
        fetch(`${own.url}/portal/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: own.url },
          body: new URLSearchParams({ api_key: apiKey }),
        })
      try {
        // Successful sign-ins (a portal user, or a test suite, signing in often) use none of the limit.
        const { key } = await own.newTenant()
        for (let i = 0; i < 12; i++) {
          const ok = await signIn(key)
          expect(ok.status).toBe(303)
          // Not counted, so nothing of the limit is used up.
          expect(ok.headers.get('ratelimit-remaining')).toBe('10')
          await ok.body?.cancel()
        }
        const statuses: number[] = []
        let last: Response | undefined
        for (let i = 0; i < 11; i++) {
          last = await signIn('epk_wrong')
          statuses.push(last.status)
          if (i < 10) await last.body?.cancel()
        }
        expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401))
        expect(statuses[10]).toBe(429)
        expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0)
        expect(last!.headers.get('ratelimit-limit')).toBe('10')
        expect(await last!.text()).toContain('Too many tries')
        // Once refused, a right key waits for the window too.
        const blocked = await signIn(key)
        expect(blocked.status).toBe(429)
        await blocked.body?.cancel()
      } finally {
        await own.close()
      }
    })

    it('limits API requests per key when configured, and only then', async () => {
      const own = await startService(kind, { env: { EPISODIC_RATE_LIMIT: '5' } })
      try {
        const a = (await own.newTenant()).key
        const b = (await own.newTenant()).key
        const replies = []
        for (let i = 0; i < 6; i++) replies.push(await call(`${own.url}/api/episodes?limit=1`, { key: a }))
        expect(replies.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
        expect(replies.slice(0, 5).map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0'])
        expect(replies[5]!.status).toBe(429)
        expect(Number(replies[5]!.headers.get('retry-after'))).toBeGreaterThan(0)
        expect([replies[5]!.headers.get('ratelimit-limit'), replies[5]!.headers.get('ratelimit-remaining')]).toEqual(['5', '0'])
        expect(replies[5]!.body.error).toMatch(/too many requests for this API key/)
        expect((await call(`${own.url}/api/episodes?limit=1`, { key: b })).status).toBe(200)
      } finally {
        await own.close()
      }
      // The shared service has no API limit.
      for (let i = 0; i < 30; i++) expect((await get('/api/episodes?limit=1')).status).toBe(200)
    })
  })

  it('logged no server error for any of the above', () => {
    expect(svc.errors).toEqual([])
  })
})
