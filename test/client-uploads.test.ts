/**
 * The client library's robot-scale uploads against the real service (Node,
 * HTTP, built-in store): multipart above the threshold with parts in
 * parallel, a failed part retried, expired URLs re-minted, an interrupted
 * upload resumed from its stored parts, and recordEpisode made safe to
 * repeat by its Idempotency-Key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeUploadTransport } from '../adapters/node/upload-transport.ts'
import { EpisodicClient } from '../src/client/client.ts'
import { ConfigurationError, ConflictError, NotFoundError } from '../src/client/errors.ts'
import { recordEpisode, uploadArtifact, type UploadOptions } from '../src/client/uploads.ts'
import { startService, type TestService } from './helpers/service.ts'

const MiB = 1024 * 1024
const TIMEOUT = 120_000
const small: UploadOptions = { multipartThreshold: 6 * MiB, partSize: 5 * MiB, backoffMs: 1, sleep: async () => {} }

function blobOf(size: number, seed: number): Blob {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 13 + seed) & 0xff
  return new Blob([bytes])
}

describe('client uploads', () => {
  let svc: TestService
  let key: string
  beforeAll(async () => {
    svc = await startService('pglite')
    key = (await svc.newTenant()).key
  }, TIMEOUT)
  afterAll(() => svc?.close())

  /** A client whose PUTs to part URLs go through `hook` first. */
  function clientWith(hook?: (url: string, count: number) => Promise<Response | undefined> | Response | undefined) {
    let puts = 0
    const wrapped: typeof fetch = async (input, init) => {
      const url = String(input)
      if (hook && init?.method === 'PUT') {
        const replaced = await hook(url, ++puts)
        if (replaced) {
          await (init.body as ReadableStream | undefined)?.cancel?.().catch(() => {})
          return replaced
        }
      }
      return fetch(input, init)
    }
    return new EpisodicClient({ apiKey: key, baseUrl: svc.url, fetch: wrapped })
  }

  async function downloaded(client: EpisodicClient, episodeId: string, kind: 'video' | 'actions' | 'sensors') {
    return new Blob([(await client.downloadArtifact(episodeId, kind)) as Uint8Array<ArrayBuffer>])
  }
  /** A multipart upload of `body` to a new episode, stopped when part 3 goes out (parts 1 and 2 are stored). */
  async function interruptedAtPart3(kind: 'video' | 'sensors', body: Blob) {
    const stop = new AbortController()
    let uploadId: string | undefined
    const client = clientWith((url) => {
      if (url.includes('partNumber=3')) stop.abort(new Error('interrupted'))
      return undefined
    })
    const { episode_id } = await client.openEpisode({ request_uploads: [] })
    await expect(
      uploadArtifact(client, { episodeId: episode_id, kind, body }, {
        ...small,
        concurrency: 1,
        signal: stop.signal,
        onMultipart: (_kind, id) => (uploadId = id),
      }),
    ).rejects.toThrow('interrupted')
    return { client, episode_id, uploadId }
  }
  const same = async (a: Blob, b: Blob) => Buffer.compare(Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())) === 0

  it('sends a small artifact as one PUT and a large one in parallel parts, retrying a failed part and a 500', async () => {
    const failures: string[] = []
    const client = clientWith((url, n) => {
      if (!url.includes('partNumber=2')) return undefined
      if (n <= 3 && !failures.includes('reset')) {
        failures.push('reset')
        throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } })
      }
      if (!failures.includes('500')) {
        failures.push('500')
        return new Response('<Error><Code>InternalError</Code><Message>try again</Message></Error>', { status: 500 })
      }
      return undefined
    })
    const { episode_id } = await client.openEpisode({ request_uploads: [] })
    const tiny = blobOf(1000, 1)
    const big = blobOf(12 * MiB + 7, 2)
    const progress: number[] = []
    const one = await uploadArtifact(client, { episodeId: episode_id, kind: 'actions', body: tiny }, small)
    expect(one).toMatchObject({ kind: 'actions', size: 1000, resumedParts: 0 })
    expect(one.uploadId).toBeUndefined()
    const many = await uploadArtifact(client, { episodeId: episode_id, kind: 'video', body: big }, { ...small, onProgress: (p) => progress.push(p.sent) })
    expect(many).toMatchObject({ kind: 'video', size: big.size })
    expect(many.etag).toMatch(/-3$/)
    expect(failures).toEqual(['reset', '500'])
    expect(progress.at(-1)).toBe(big.size)
    expect(await same(await downloaded(client, episode_id, 'video'), big)).toBe(true)
    expect(await same(await downloaded(client, episode_id, 'actions'), tiny)).toBe(true)
  }, TIMEOUT)

  it('gives up after its attempts with a ServerError when the store kept answering 5xx, a TransportError when the network failed', async () => {
    const { episode_id } = await clientWith(() => undefined).openEpisode({ request_uploads: [] })
    const body = blobOf(1000, 3)
    const failing = (answer: () => Response) => clientWith((url) => (url.includes('/storage/') ? answer() : undefined))
    const busy = failing(() => new Response('<Error><Code>InternalError</Code><Message>disk full</Message></Error>', { status: 500 }))
    await expect(uploadArtifact(busy, { episodeId: episode_id, kind: 'actions', body }, { ...small, attempts: 2 })).rejects.toMatchObject({
      name: 'ServerError',
      status: 500,
      message: expect.stringMatching(/failed after 2 attempts: 500 .*disk full/),
    })
    const down = failing(() => {
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })
    })
    await expect(uploadArtifact(down, { episodeId: episode_id, kind: 'actions', body }, { ...small, attempts: 2 })).rejects.toMatchObject({
      name: 'TransportError',
      message: expect.stringContaining('failed after 2 attempts'),
    })
  }, TIMEOUT)

  it('recordEpisode without a key leaves an episode whose upload failed failed, not recording; with a key, recording to resume', async () => {
    const refusing = clientWith(() => new Response('<Error><Code>InvalidArgument</Code><Message>no</Message></Error>', { status: 400 }))
    const statusOf = async (name: string) => (await refusing.listEpisodes({ limit: 200 })).items.find((e) => e.name === name)?.status
    await expect(recordEpisode(refusing, { episode: { name: 'keyless-upload' }, artifacts: { actions: blobOf(100, 1) } }, small)).rejects.toThrow(
      'refused by object storage (400)',
    )
    expect(await statusOf('keyless-upload')).toBe('failed')
    await expect(
      recordEpisode(refusing, { episode: { name: 'keyed-upload' }, artifacts: { actions: blobOf(100, 1) }, idempotencyKey: 'keyed-upload-1' }, small),
    ).rejects.toThrow('refused by object storage (400)')
    expect(await statusOf('keyed-upload')).toBe('recording')
  }, TIMEOUT)

  it('stops sending parts once one is refused for good: none starts after it, none runs after the error', async () => {
    const parts: number[] = []
    const client = clientWith((url) => {
      const part = Number(new URL(url).searchParams.get('partNumber'))
      parts.push(part)
      if (part === 1) return new Response('<Error><Code>InvalidArgument</Code><Message>refused</Message></Error>', { status: 400 })
      return undefined
    })
    const { episode_id } = await client.openEpisode({ request_uploads: [] })
    // 8 parts of 5 MiB, two in flight: part 1 is refused while part 2 is on its way.
    const body = blobOf(40 * MiB, 9)
    await expect(uploadArtifact(client, { episodeId: episode_id, kind: 'video', body }, { ...small, concurrency: 2 })).rejects.toThrow(
      /part 1 of video refused/,
    )
    const afterError = parts.length
    await new Promise((r) => setTimeout(r, 300))
    expect(parts.length).toBe(afterError)
    expect(parts.sort()).toEqual([1, 2])
  }, TIMEOUT)

  it('leaves the part size to the server unless one is given (it grows past 625 GiB)', async () => {
    const created: unknown[] = []
    const spying: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      if (init?.method === 'POST' && String(input).endsWith('/multipart')) {
        created.push({ sent: JSON.parse(String(init.body)), got: await response.clone().json() })
      }
      return response
    }
    const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url, fetch: spying })
    const { episode_id } = await client.openEpisode({ request_uploads: [] })
    const body = blobOf(7 * MiB, 3)
    const { partSize: _, ...noPartSize } = small
    expect(await uploadArtifact(client, { episodeId: episode_id, kind: 'video', body }, noPartSize)).toMatchObject({ size: body.size })
    await uploadArtifact(client, { episodeId: episode_id, kind: 'sensors', body }, small)
    expect(created).toMatchObject([
      { sent: { kind: 'video', size: body.size }, got: { part_size: 64 * MiB, part_count: 1 } },
      { sent: { kind: 'sensors', size: body.size, part_size: 5 * MiB }, got: { part_size: 5 * MiB, part_count: 2 } },
    ])
    expect((created[0] as { sent: object }).sent).not.toHaveProperty('part_size')
    expect(await same(await downloaded(client, episode_id, 'video'), body)).toBe(true)
  }, TIMEOUT)

  it('sends single PUTs and parts through UploadOptions.put (the Node transport), each part its own range of the file', async () => {
    const transport = nodeUploadTransport()
    const ranges: [number, number][] = []
    const put: UploadOptions['put'] = (request) => (ranges.push([request.offset, request.length]), transport.put(request))
    const dir = mkdtempSync(join(tmpdir(), 'episodic-node-put-'))
    try {
      const big = blobOf(12 * MiB + 7, 3)
      writeFileSync(join(dir, 'big.bin'), Buffer.from(await big.arrayBuffer()))
      const file = await transport.open(join(dir, 'big.bin'))
      const client = clientWith()
      const { episode_id } = await client.openEpisode({ request_uploads: [] })
      const progress: number[] = []
      const parts = await uploadArtifact(client, { episodeId: episode_id, kind: 'video', body: file }, {
        ...small,
        put,
        onProgress: (p) => progress.push(p.sent),
      })
      expect(parts.etag).toMatch(/-3$/)
      expect(ranges.sort((a, b) => a[0] - b[0])).toEqual([[0, 5 * MiB], [5 * MiB, 5 * MiB], [10 * MiB, 2 * MiB + 7]])
      expect(progress.at(-1)).toBe(big.size)
      expect(await same(await downloaded(client, episode_id, 'video'), big)).toBe(true)
      ranges.length = 0
      const one = await uploadArtifact(client, { episodeId: episode_id, kind: 'actions', body: file.slice(0, 1000) }, { ...small, put })
      expect(one.size).toBe(1000)
      expect(ranges).toEqual([[0, 1000]])
      expect(await same(await downloaded(client, episode_id, 'actions'), big.slice(0, 1000))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, TIMEOUT)

  it('re-mints part URLs that expired mid-upload', async () => {
    let moved = false
    const client = clientWith((url) => {
      if (!moved && url.includes('partNumber=')) {
        moved = true
        svc.advance(31 * 60_000) // the service's clock (and so its store) is now past the URLs' expiry
      }
      return undefined
    })
    const { episode_id } = await client.openEpisode({ request_uploads: [] })
    const big = blobOf(11 * MiB, 3)
    await uploadArtifact(client, { episodeId: episode_id, kind: 'sensors', body: big }, small)
    expect(moved).toBe(true)
    expect(await same(await downloaded(client, episode_id, 'sensors'), big)).toBe(true)
  }, TIMEOUT)

  it('resumes an interrupted multipart upload from the parts already stored', async () => {
    const big = blobOf(15 * MiB + 3, 4)
    const { client, episode_id, uploadId } = await interruptedAtPart3('video', big)
    expect(uploadId).toBeDefined()
    const again = await uploadArtifact(clientWith(), { episodeId: episode_id, kind: 'video', body: big, uploadId }, small)
    expect(again.resumedParts).toBe(2)
    expect(await same(await downloaded(client, episode_id, 'video'), big)).toBe(true)
  }, TIMEOUT)

  it('resumes only an upload planned for a file of this size; another size starts afresh and arrives whole', async () => {
    const { client, episode_id, uploadId } = await interruptedAtPart3('sensors', blobOf(12 * MiB, 5))
    // The file grew by two parts since: resuming would have stored the first plan's 12 MiB.
    const grown = blobOf(20 * MiB, 6)
    const again = await uploadArtifact(clientWith(), { episodeId: episode_id, kind: 'sensors', body: grown, uploadId }, small)
    expect(again).toMatchObject({ size: 20 * MiB, resumedParts: 0 })
    expect(again.uploadId).not.toBe(uploadId)
    expect(await same(await downloaded(client, episode_id, 'sensors'), grown)).toBe(true)
    await expect(client.resumeMultipart(episode_id, uploadId!)).rejects.toBeInstanceOf(NotFoundError)
  }, TIMEOUT)

  it("refuses the replay helper's input shape with a message naming both recordEpisode functions", async () => {
    // episodic/replay's recordEpisode takes { episode, sensors, actions }; this one { episode, artifacts }.
    const wrong = { episode: {}, sensors: {}, actions: {} } as unknown as Parameters<typeof recordEpisode>[1]
    const error = await recordEpisode(clientWith(), wrong).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toContain('artifacts must be an object of kind -> Blob')
    expect((error as Error).message).toContain("episodic/replay's recordEpisode")
  })

  it('fails loudly, naming the episode, when the service has no object storage', async () => {
    const bare = await startService('pglite', { env: { EPISODIC_STORAGE: 'none' } })
    try {
      const client = new EpisodicClient({ apiKey: (await bare.newTenant()).key, baseUrl: bare.url })
      const error = await recordEpisode(client, { artifacts: { actions: blobOf(100, 1) } }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ConfigurationError)
      expect((error as Error).message).toMatch(
        /^the service has no object storage \(storage "unconfigured"\), so actions cannot be uploaded; episode \S+ stays recording$/,
      )
      const { episode_id } = await client.openEpisode({ request_uploads: [] })
      await expect(uploadArtifact(client, { episodeId: episode_id, kind: 'actions', body: blobOf(100, 1) })).rejects.toBeInstanceOf(ConfigurationError)
    } finally {
      await bare.close()
    }
  }, TIMEOUT)

  it('replays an open with fresh upload URLs only while the episode takes uploads', async () => {
    const client = clientWith()
    const body = { name: 'replayed', request_uploads: ['actions' as const] }
    const first = await client.openEpisode(body, { idempotencyKey: 'replay-urls-1' })
    expect((await client.openEpisode(body, { idempotencyKey: 'replay-urls-1' })).upload_urls).toHaveLength(1)
    await client.finalizeEpisode(first.episode_id, {})
    expect((await client.openEpisode(body, { idempotencyKey: 'replay-urls-1' })).upload_urls).toEqual([])
    await svc.archive(first.episode_id)
    const late = await client.openEpisode(body, { idempotencyKey: 'replay-urls-1' })
    expect(late).toMatchObject({ episode_id: first.episode_id, upload_urls: [] })
  }, TIMEOUT)

  it('recordEpisode opens, uploads, finalizes with bytes_total; repeated with its key it reopens and skips what arrived', async () => {
    const client = clientWith()
    const artifacts = { video: blobOf(7 * MiB, 5), actions: blobOf(300, 6) }
    const idempotencyKey = `record-${Math.random()}`
    const first = await recordEpisode(client, { episode: { robot: 'arm-9' }, artifacts, idempotencyKey, verify: true }, small)
    expect(first.reopened).toBe(false)
    expect(first.finalized.status).toBe('ready')
    expect((await client.getEpisode(first.episode_id)).bytes_total).toBe(7 * MiB + 300)
    const again = await recordEpisode(client, { episode: { robot: 'arm-9' }, artifacts, idempotencyKey, verify: true }, small)
    expect(again.episode_id).toBe(first.episode_id)
    expect(again.reopened).toBe(true)
    expect(again.uploads.map((u) => u.skipped)).toEqual([true, true])
    // The 7 MiB video went up in parts: its stored ETag names the parts, so only its size was compared.
    expect(again.uploads.map((u) => [u.kind, u.sizeOnly ?? false])).toEqual([['video', true], ['actions', false]])
  }, TIMEOUT)

  it('recordEpisode repeated with a file of the same size but other bytes does not take it as stored', async () => {
    const client = clientWith()
    const idempotencyKey = `rewritten-${Math.random()}`
    const open = { robot: 'arm-9' }
    // Interrupted before finalize: the episode still takes uploads, so the new bytes go up.
    const opened = await client.openEpisode({ ...open, request_uploads: ['actions'] }, { idempotencyKey })
    await uploadArtifact(client, { episodeId: opened.episode_id, kind: 'actions', body: blobOf(300, 1), url: opened.upload_urls[0] }, small)
    const rewritten = blobOf(300, 2)
    const resumed = await recordEpisode(client, { episode: open, artifacts: { actions: rewritten }, idempotencyKey }, small)
    expect(resumed.uploads.map((u) => u.skipped)).toEqual([false])
    expect(await same(await downloaded(client, opened.episode_id, 'actions'), rewritten)).toBe(true)
    // Once ready, a changed file is refused rather than reported as stored.
    await expect(recordEpisode(client, { episode: open, artifacts: { actions: blobOf(300, 3) }, idempotencyKey }, small)).rejects.toBeInstanceOf(ConflictError)
    expect(await same(await downloaded(client, opened.episode_id, 'actions'), rewritten)).toBe(true)
  }, TIMEOUT)
})
