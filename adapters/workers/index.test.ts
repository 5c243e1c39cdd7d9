/**
 * The Worker's own wiring, called directly in Node (workerd itself runs the
 * HTTP suite in test/runtimes/workers.test.ts): configuration errors, and the
 * Hyperdrive binding taking precedence over DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryFiles } from '../../src/storage/memory-files.ts'
import { createTempDatabase, postgresAvailable } from '../../test/helpers/postgres.ts'
import { createClient, createKey } from '../../src/admin/admin.ts'
import { openDatabase } from '../../src/db/open.ts'
import { NodeSha256 } from '../node/sha256.ts'
import { createWorker, type R2BucketLike } from './index.ts'

const pending: Promise<unknown>[] = []
const ctx = { waitUntil: (promise: Promise<unknown>) => void pending.push(promise) }

/** A BlobFiles-backed stand-in for an R2 binding. */
function bucket(): R2BucketLike {
  const files = createMemoryFiles()
  return {
    put: (key, body) => files.put(key, typeof body === 'string' ? new Response(body).body! : body),
    // R2 answers with a stream whatever the size.
    get: async (key) => {
      const object = await files.get(key)
      return object && { ...object, body: object.body instanceof Uint8Array ? new Response(object.body).body! : object.body }
    },
  }
}

function quietWorker(options: Parameters<typeof createWorker>[0] = {}) {
  const logged: unknown[] = []
  const worker = createWorker({ ...options, overrides: { ...options.overrides, logger: { error: (_message, error) => logged.push(error) } } })
  return { worker, logged }
}

describe('createWorker configuration', () => {
  it.each([
    [{}, /no database/],
    [{ DATABASE_URL: 'postgres://db/x' }, /R2 bucket binding named BUCKET/],
    [{ DATABASE_URL: 'postgres://db/x', BUCKET: bucket() }, /EPISODIC_STORAGE_SECRET/],
  ])('answers a generic 500 and logs why (%#)', async (env, reason) => {
    const { worker, logged } = quietWorker()
    const reply = await worker.fetch(new Request('https://w.example/healthz'), env, ctx)
    expect(reply.status).toBe(500)
    expect(await reply.json()).toEqual({ error: 'internal error' })
    expect(String((logged[0] as Error).message)).toMatch(reason)
  })

  it('refuses an upload to the built-in store without Content-Length with 411 (the core rule) without touching the database', async () => {
    const { worker } = quietWorker()
    const env = { DATABASE_URL: 'postgres://127.0.0.1:1/none', BUCKET: bucket(), EPISODIC_STORAGE_SECRET: 'secret' }
    const reply = await worker.fetch(new Request('https://w.example/storage/a/b/actions.npz', { method: 'PUT' }), env, ctx)
    expect(reply.status).toBe(411)
  })
})

const withPostgres = postgresAvailable() ? describe : describe.skip
withPostgres('createWorker on PostgreSQL', () => {
  let temp: Awaited<ReturnType<typeof createTempDatabase>>
  beforeAll(async () => (temp = await createTempDatabase()))
  afterAll(async () => {
    await Promise.allSettled(pending)
    await temp?.drop()
  })

  it('uses the Hyperdrive binding over DATABASE_URL and migrates on the first request', async () => {
    const { worker, logged } = quietWorker()
    const env = { HYPERDRIVE: { connectionString: temp.url }, DATABASE_URL: 'postgres://127.0.0.1:1/unreachable', EPISODIC_STORAGE: 'none' }
    expect((await worker.fetch(new Request('https://w.example/healthz'), env, ctx)).status).toBe(200)
    const unauthorized = await worker.fetch(new Request('https://w.example/api/ingest/episode', { method: 'POST', body: '{}' }), env, ctx)
    // 401, not 500: the key lookup reached the migrated database.
    expect(unauthorized.status).toBe(401)
    expect(logged).toEqual([])
  })

  it('keeps a portal session valid across isolates without EPISODIC_SESSION_SECRET (its key is in the database)', async () => {
    const env = { DATABASE_URL: temp.url, EPISODIC_STORAGE: 'none' }
    const [a, b] = [quietWorker(), quietWorker()]
    expect((await a.worker.fetch(new Request('https://w.example/healthz'), env, ctx)).status).toBe(200) // migrates
    const db = await openDatabase({ url: temp.url, max: 1, skipMigrations: true })
    let key: string
    try {
      await createClient({ db, sha256: NodeSha256 }, 'isolates')
      key = (await createKey({ db, sha256: NodeSha256 }, 'isolates')).key
    } finally {
      await db.destroy()
    }
    const signedIn = await a.worker.fetch(
      new Request('https://w.example/portal/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://w.example' },
        body: new URLSearchParams({ api_key: key }),
      }),
      env,
      ctx,
    )
    expect(signedIn.status).toBe(303)
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!
    const other = await b.worker.fetch(new Request('https://w.example/api/episodes?limit=1', { headers: { cookie } }), env, ctx)
    expect(other.status).toBe(200)
    expect([...a.logged, ...b.logged]).toEqual([])
  })
})
