/**
 * Edges of the written contract found by a black-box audit, pinned over HTTP:
 * a 400 names the field with the rule it broke (a missing required field is
 * "required", never "unknown"), length rules count code points in queries as
 * in bodies, stored truncation never cuts a character in half, and no query
 * parameter or body value reaches the database as a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from './helpers/http.ts'
import { startService, type TestService } from './helpers/service.ts'

describe('contract edges (PGlite, in-process)', { timeout: 60_000 }, () => {
  let svc: TestService
  let key: string
  const api = (path: string, init: Parameters<typeof call>[1] = {}) =>
    call(`${svc.url}${path}`, { key, ...init }, (url, req) => Promise.resolve(svc.app.request(url, req)))
  const episode = async () => {
    const reply = await api('/api/ingest/episode', { body: { request_uploads: [] } })
    expect(reply.status, reply.text).toBe(201)
    return reply.body.episode_id as string
  }

  beforeAll(async () => {
    svc = await startService('pglite', { listen: false })
    key = (await svc.newTenant()).key
  })
  afterAll(() => svc?.close())

  it('names a missing required field as required, an unknown one as unknown', async () => {
    const create = await api('/api/ingest/eval-run', { body: { baseline_episode_ids: [await episode()] } })
    expect(create.status).toBe(400)
    expect(create.body.error).toBe('candidate_policy_version: is required')
    const empty = await api('/api/ingest/eval-run', { body: {} })
    expect(empty.body.error).toBe('candidate_policy_version: is required')
    const noIds = await api('/api/ingest/eval-run', { body: { candidate_policy_version: 'v2' } })
    expect(noIds.body.error).toBe('baseline_episode_ids: is required')
    const unknown = await api('/api/ingest/eval-run', { body: { candidate_policy_version: 'v2', baseline_episode_ids: [await episode()], extra: 1 } })
    expect(unknown.body.error).toBe('extra: unknown field')

    const b = await episode()
    const run = (await api('/api/ingest/eval-run', { body: { candidate_policy_version: 'v2', baseline_episode_ids: [b] } })).body.eval_run_id
    const noStatus = await api(`/api/ingest/eval-run/${run}/result`, { body: { baseline_episode_id: b } })
    expect([noStatus.status, noStatus.body.error]).toEqual([400, 'status: is required'])
    const noBaseline = await api(`/api/ingest/eval-run/${run}/result`, { body: { status: 'done' } })
    expect([noBaseline.status, noBaseline.body.error]).toEqual([400, 'baseline_episode_id: is required'])
  })

  it('refuses an array as outcome_source instead of storing {}', async () => {
    const b = await episode()
    const run = (await api('/api/ingest/eval-run', { body: { candidate_policy_version: 'v2', baseline_episode_ids: [b] } })).body.eval_run_id
    const reply = await api(`/api/ingest/eval-run/${run}/result`, {
      body: { baseline_episode_id: b, status: 'done', metrics: { steps: 1, outcome_source: [] } },
    })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toMatch(/^metrics\.outcome_source: /)
  })

  it('keeps a metric blob extra column holding an integer past 2^53 as given', async () => {
    const b = await episode()
    const run = (await api('/api/ingest/eval-run', { body: { candidate_policy_version: 'v2', baseline_episode_ids: [b] } })).body.eval_run_id
    const text = `{"baseline_episode_id":"${b}","status":"done","metrics":{"steps":1,"extra_big":12345678901234567890123,"extra_ns":[1732560000123456789]}}`
    const reply = await api(`/api/ingest/eval-run/${run}/result`, { raw: new TextEncoder().encode(text), headers: { 'content-type': 'application/json' } })
    expect(reply.status, reply.text).toBe(200)
    const read = await api(`/api/eval-runs/${run}`)
    expect(read.text).toContain('"extra_big":12345678901234567890123')
    expect(read.text).toContain('"extra_ns":[1732560000123456789]')
  })

  it('truncates a failed result error to 2,000 code points, never half a character', async () => {
    const b = await episode()
    const run = (await api('/api/ingest/eval-run', { body: { candidate_policy_version: 'v2', baseline_episode_ids: [b] } })).body.eval_run_id
    const error = 'a' + '😀'.repeat(2500)
    const reply = await api(`/api/ingest/eval-run/${run}/result`, { body: { baseline_episode_id: b, status: 'failed', error } })
    expect(reply.status, reply.text).toBe(200)
    const stored: string = (await api(`/api/eval-runs/${run}`)).body.results[0].error
    expect([...stored].length).toBe(2000)
    expect(stored).toBe([...error].slice(0, 2000).join(''))
    expect(stored).not.toContain('\ufffd')
  })

  it('counts code points in the eval-run list filters, as at create', async () => {
    const version = '😀'.repeat(120)
    const created = await api('/api/ingest/eval-run', {
      body: { candidate_policy_version: version, baseline_policy_version: version, baseline_episode_ids: [await episode()] },
    })
    expect(created.status, created.text).toBe(201)
    for (const param of ['candidate_policy_version', 'baseline_policy_version']) {
      const listed = await api(`/api/eval-runs?${param}=${encodeURIComponent(version)}`)
      expect(listed.status, listed.text).toBe(200)
      expect(listed.body.items.map((r: { eval_run_id: string }) => r.eval_run_id)).toEqual([created.body.eval_run_id])
      const tooLong = await api(`/api/eval-runs?${param}=${encodeURIComponent(version + 'x')}`)
      expect([tooLong.status, tooLong.body.error]).toEqual([400, `${param}: must be at most 120 characters`])
    }
  })

  it('answers 400, never 500, to a created_after / created_before the database cannot hold', async () => {
    for (const list of ['/api/episodes', '/api/eval-runs']) {
      for (const query of ['created_after=0000-01-01', 'created_after=0001-01-01T00:00:00%2B01:00', 'created_before=9999-12-31T23:59:59-05:00']) {
        const reply = await api(`${list}?${query}`)
        expect(reply.status, `${list}?${query}: ${reply.text}`).toBe(400)
        expect(reply.body.error).toMatch(/^created_(after|before): /)
      }
      for (const query of ['created_after=0001-01-01', 'created_before=9999-12-31T23:59:59.999Z']) {
        const reply = await api(`${list}?${query}`)
        expect(reply.status, `${list}?${query}: ${reply.text}`).toBe(200)
      }
    }
    expect(svc.errors).toEqual([])
  })

  it('says what a multipart size may be, rather than "must be a number" for an integer past 2^53', async () => {
    const id = await episode()
    const raw = (body: string) => api(`/api/ingest/episode/${id}/multipart`, { raw: body, headers: { 'content-type': 'application/json' } })
    for (const size of ['9007199254740993', '-1', '1.5', '6e12']) {
      const reply = await raw(`{"kind":"video","size":${size}}`)
      expect([reply.status, reply.body.error], size).toEqual([400, 'size: must be a whole number of bytes from 0 to 5497558138880 (5 TiB)'])
    }
  })

  it('says what bytes_total may be, rather than "must be a number" for an integer past 2^53', async () => {
    const id = await episode()
    const finalize = (raw: string) => api(`/api/ingest/episode/${id}/finalize`, { raw, headers: { 'content-type': 'application/json' } })
    for (const big of ['9007199254740993', '9223372036854775807', '9223372036854775808', '100000000000000000000']) {
      const reply = await finalize(`{"bytes_total":${big}}`)
      expect([reply.status, reply.body.error]).toEqual([400, 'bytes_total: must be an integer from 0 to 9007199254740991'])
    }
    const max = await finalize('{"bytes_total":9007199254740991}')
    expect(max.status, max.text).toBe(200)
    expect((await api(`/api/episodes/${id}`)).text).toContain('"bytes_total":9007199254740991')
  })

  it('keeps a seed written with a fraction or an exponent exact, and refuses one that is not an integer', async () => {
    const open = (raw: string) => api('/api/ingest/episode', { raw, headers: { 'content-type': 'application/json' } })
    for (
      const [text, stored] of [
        ['9.007199254740993e15', '9007199254740993'],
        ['9007199254740993.0', '9007199254740993'],
        ['9.223372036854775807e18', '9223372036854775807'],
        ['-9223372036854775808.000', '-9223372036854775808'],
        ['1.2e1', '12'],
        // Integers whose digits are also how the nearest double prints: the literal's value, not the double's.
        ['9223372036854775000', '9223372036854775000'],
        ['4712538799475035000', '4712538799475035000'],
        ['485096128903068350', '485096128903068350'],
        ['-9223372036854775000', '-9223372036854775000'],
      ]
    ) {
      const reply = await open(`{"seed":${text},"request_uploads":[]}`)
      expect(reply.status, `${text}: ${reply.text}`).toBe(201)
      expect((await api(`/api/episodes/${reply.body.episode_id}`)).text, text).toContain(`"seed":${stored},`)
    }
    // Fractions a double cannot keep are refused too, not rounded to the nearest whole number.
    for (
      const text of [
        '9.223372036854775808e18',
        '1.5',
        '1e400',
        '9007199254740993.5',
        '1.0000000000000001',
        '1e-400',
        '-9223372036854775808.5',
        // Past the range, though the nearest double is its end: -2^63 - 192.
        '-9223372036854776000',
        '9223372036854776000',
      ]
    ) {
      const reply = await open(`{"seed":${text}}`)
      expect([reply.status, reply.body.error], text).toEqual([400, expect.stringMatching(/^seed: must be/)])
    }
  })

  it('refuses a number beyond a double in metadata instead of storing null', async () => {
    const raw = (body: string) => ({ raw: body, headers: { 'content-type': 'application/json' } })
    const open = await api('/api/ingest/episode', raw('{"metadata":{"gain":[1,-1e400]}}'))
    expect([open.status, open.body.error]).toEqual([400, "metadata.gain[1]: must be a finite number (beyond a double's range)"])
    // The same answer when a long integer elsewhere in the body sends it through the exact parser
    // (which had read 1e400 as a 401-digit integer and stored it).
    for (const other of ['"seed":9007199254740993', '"y":1.0000000000000002']) {
      const mixed = await api('/api/ingest/episode', raw(`{${other},"metadata":{"x":1e400},"request_uploads":[]}`))
      expect([mixed.status, mixed.body.error], other).toEqual([400, "metadata.x: must be a finite number (beyond a double's range)"])
    }
    const fps = await api('/api/ingest/episode', raw('{"seed":9007199254740993,"fps":1e400}'))
    expect([fps.status, fps.body.error]).toEqual([400, "fps: must be a finite number (beyond a double's range)"])
    const id = await episode()
    const finalize = await api(`/api/ingest/episode/${id}/finalize`, raw('{"metadata":{"x":1e999}}'))
    expect([finalize.status, finalize.body.error]).toEqual([400, "metadata.x: must be a finite number (beyond a double's range)"])
    const run = await api('/api/ingest/eval-run', raw(`{"candidate_policy_version":"v2","baseline_episode_ids":["${id}"],"metadata":{"x":1e400}}`))
    expect([run.status, run.body.error]).toEqual([400, "metadata.x: must be a finite number (beyond a double's range)"])
    // Large finite numbers are stored as given.
    const big = await api('/api/ingest/episode', raw('{"metadata":{"x":1e300},"request_uploads":[]}'))
    expect((await api(`/api/episodes/${big.body.episode_id}`)).body.metadata).toEqual({ x: 1e300 })
  })

  it('keeps metadata merged over repeated finalizes within the limit of one request', async () => {
    const id = await episode()
    const chunk = (n: number) => ({ [`k${n}`]: 'x'.repeat(100_000) })
    expect((await api(`/api/ingest/episode/${id}/finalize`, { body: { metadata: chunk(1) } })).status).toBe(200)
    expect((await api(`/api/ingest/episode/${id}/finalize`, { body: { metadata: chunk(2) } })).status).toBe(200)
    // A third 100 kB key would take it past 256 KiB: before, repeated finalizes grew it without bound.
    const third = await api(`/api/ingest/episode/${id}/finalize`, { body: { metadata: chunk(3) } })
    expect([third.status, third.body.error]).toEqual([
      400,
      expect.stringMatching(/^metadata: merged with the episode's stored metadata it would pass 262144 bytes/),
    ])
    const stored = (await api(`/api/episodes/${id}`)).body
    expect(Object.keys(stored.metadata).sort()).toEqual(['k1', 'k2'])
    // Replacing a key with a smaller value, or adding nothing, still works.
    expect((await api(`/api/ingest/episode/${id}/finalize`, { body: { metadata: { k2: 'short' } } })).status).toBe(200)
    expect((await api(`/api/ingest/episode/${id}/finalize`, { body: {} })).status).toBe(200)
    expect((await api(`/api/ingest/episode/${id}/finalize`, { body: { metadata: chunk(3) } })).status).toBe(200)
    // The other answers are unchanged: an unknown episode is 404.
    expect((await api(`/api/ingest/episode/00000000-0000-4000-8000-000000000000/finalize`, { body: { metadata: chunk(1) } })).status).toBe(404)
  })

  it('names an array item in brackets, whichever check refused it', async () => {
    const kind = await api('/api/ingest/episode', { body: { request_uploads: ['video', 'audio'] } })
    expect(kind.status).toBe(400)
    expect(kind.body.error).toMatch(/^request_uploads\[1\]: /)
    const text = await api('/api/ingest/episode', { body: { request_uploads: ['video', 'a\u0000'] } })
    expect(text.body.error).toBe('request_uploads[1]: must not contain \\u0000')
  })

  it('answers 409 to any finalize body for an archived episode, a malformed one too', async () => {
    const id = await episode()
    await svc.archive(id)
    for (const raw of ['{"status":"bogus"}', '{', '{"metadata":{"x":1e400}}', '{"status":"ready"}', '']) {
      const reply = await api(`/api/ingest/episode/${id}/finalize`, { raw, headers: { 'content-type': 'application/json' } })
      expect([reply.status, reply.body.error], raw).toEqual([409, 'episode is archived and cannot be finalized'])
    }
    // Not archived: the malformed body is a 400 as before; another client's archived episode a 404.
    const live = await episode()
    const bad = await api(`/api/ingest/episode/${live}/finalize`, { body: { status: 'bogus' } })
    expect([bad.status, bad.body.error]).toEqual([400, 'status: must be ready or failed'])
    const other = (await svc.newTenant()).key
    const foreign = await call(
      `${svc.url}/api/ingest/episode/${id}/finalize`,
      { key: other, body: { status: 'bogus' } },
      (url, req) => Promise.resolve(svc.app.request(url, req)),
    )
    expect(foreign.status).toBe(400)
    const foreignValid = await call(
      `${svc.url}/api/ingest/episode/${id}/finalize`,
      { key: other, body: {} },
      (url, req) => Promise.resolve(svc.app.request(url, req)),
    )
    expect(foreignValid.status).toBe(404)
    expect((await api(`/api/episodes/${id}`)).body.status).toBe('archived')
  })

  it('answers 404 to a result for a baseline or replay id that is not a UUID, as for an unknown one', async () => {
    const b = await episode()
    const run = (await api('/api/ingest/eval-run', { body: { candidate_policy_version: 'v2', baseline_episode_ids: [b] } })).body.eval_run_id
    const nope = await api(`/api/ingest/eval-run/${run}/result`, { body: { baseline_episode_id: 'nope', status: 'done' } })
    expect([nope.status, nope.body.error]).toEqual([404, 'baseline episode is not part of this eval run'])
    const replay = await api(`/api/ingest/eval-run/${run}/result`, { body: { baseline_episode_id: b, status: 'done', replay_episode_id: 'nope' } })
    expect([replay.status, replay.body.error]).toEqual([404, 'replay episode not found'])
    const type = await api(`/api/ingest/eval-run/${run}/result`, { body: { baseline_episode_id: 7, status: 'done' } })
    expect([type.status, type.body.error]).toEqual([400, 'baseline_episode_id: must be a string'])
    const unknownRun = await api('/api/ingest/eval-run/00000000-0000-4000-8000-000000000000/result', { body: { baseline_episode_id: 'nope', status: 'done' } })
    expect(unknownRun.status).toBe(404)
    expect(svc.errors).toEqual([])
  })
})
