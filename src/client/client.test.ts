import { describe, expect, it } from 'vitest'
import { EpisodicClient } from './client.ts'

const KEY = 'epk_0123456789abcdef_0123456789abcdef0123456789abcdef'

/** A client whose every request is answered with `text`. */
function answering(text: string) {
  const fetch = () => Promise.resolve(new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }))
  return new EpisodicClient({ apiKey: KEY, baseUrl: 'http://service.test', fetch: fetch as typeof globalThis.fetch })
}

describe('EpisodicClient numbers', () => {
  it('keeps a seed past 2^53 exact, but a rollup value past it a number (the summary is computed from doubles)', async () => {
    const run = '{"eval_run_id":"r","status":"completed","updated_at":"t","summary":{"reward_mean":{"baseline":10000000000000000,"delta":-9007199254740993}},'
    const finalized = await answering(`${run}"metadata":{"seed":9223372036854775807}}`).finalizeEvalRun('r')
    expect(finalized.summary.reward_mean.baseline).toBe(1e16)
    expect(typeof finalized.summary.reward_mean.delta).toBe('number')
    expect((finalized as unknown as { metadata: { seed: unknown } }).metadata.seed).toBe(9223372036854775807n)
    const page = await answering(`{"items":[${run}"metadata":{}}],"next_cursor":null}`).listEvalRuns()
    expect(page.items[0]!.summary).toMatchObject({ reward_mean: { baseline: 1e16 } })
    const episode = await answering('{"episode_id":"e","seed":-9223372036854775808}').getEpisode('e')
    expect(episode.seed).toBe(-9223372036854775808n)
  })
})

describe('EpisodicClient against a server that is not episodic', () => {
  it('says so when a 200 answer is not a JSON object, instead of failing later on a missing field', async () => {
    const html = new EpisodicClient({
      apiKey: KEY,
      baseUrl: 'http://intranet.test',
      fetch: (() => Promise.resolve(new Response('<html>welcome</html>', { headers: { 'content-type': 'text/html' } }))) as typeof fetch,
    })
    await expect(html.createEvalRun({ candidate_policy_version: 'v', baseline_episode_ids: ['x'] })).rejects.toMatchObject({
      name: 'TransportError',
      message: 'POST /api/ingest/eval-run: HTTP 200 with text/html, not an answer of episodic: is http://intranet.test the service, and is it up?',
    })
    const empty = answering('')
    await expect(empty.getEpisode('e')).rejects.toThrow(
      'GET /api/episodes/e: HTTP 200 with an empty body, not an answer of episodic: is http://service.test the service, and is it up?',
    )
  })

  it("takes an error answer that is not episodic's JSON as the service not being there (TransportError), whatever its status", async () => {
    for (const status of [404, 401, 502]) {
      const other = new EpisodicClient({
        apiKey: KEY,
        baseUrl: 'http://files.test',
        fetch: (() =>
          Promise.resolve(new Response('<!DOCTYPE HTML><title>Error</title>', { status, headers: { 'content-type': 'text/html' } }))) as typeof fetch,
      })
      // A 404 page is not "baseline not found", nor a 401 page a refused key.
      await expect(other.getEpisode('e')).rejects.toMatchObject({
        name: 'TransportError',
        message: `GET /api/episodes/e: HTTP ${status} with text/html, not an answer of episodic: is http://files.test the service, and is it up?`,
      })
    }
  })

  it('takes a 204 as no body (an aborted multipart upload)', async () => {
    const client = new EpisodicClient({
      apiKey: KEY,
      baseUrl: 'http://service.test',
      fetch: (() => Promise.resolve(new Response(null, { status: 204 }))) as typeof fetch,
    })
    await expect(client.abortMultipart('e', 'u')).resolves.toBeUndefined()
  })
})
