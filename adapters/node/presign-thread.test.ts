import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createLocalStorage } from '../../src/storage/local.ts'
import { createS3Storage } from '../../src/storage/s3.ts'
import type { BlobFiles, ObjectStorage } from '../../src/storage/types.ts'
import { presignOnThread, type SigningSpec, type ThreadedStorage } from './presign-thread.ts'
import { NodeSha256 } from './sha256.ts'

const NOW = new Date('2026-11-23T10:20:30.456Z')
const FILES: BlobFiles = { put: () => Promise.reject(new Error('unused')), get: () => Promise.reject(new Error('unused')) }
const S3 = { endpoint: 'https://acct.r2.cloudflarestorage.com', bucket: 'runs', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', region: 'auto' }
const dir = mkdtempSync(join(tmpdir(), 'episodic-presign-thread-'))
const open: ThreadedStorage[] = []

/** What workers reported failing; the tests that expect the worker to sign check it stays empty. */
let workerErrors: unknown[] = []

function threaded(storage: ObjectStorage, spec: SigningSpec, options?: Parameters<typeof presignOnThread>[2]): ThreadedStorage {
  const wrapped = presignOnThread(storage, spec, { onWorkerError: (e) => workerErrors.push(e), ...options })
  open.push(wrapped)
  return wrapped
}

/** A worker module of our own making (plain .mjs, so it needs no loader). */
function workerModule(name: string, source: string): URL {
  const file = join(dir, name)
  writeFileSync(file, source)
  return pathToFileURL(file)
}

const jobs = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `c1/e${i}/video.mp4`, contentType: 'video/mp4', now: NOW, expiresInSeconds: 1800, origin: 'http://127.0.0.1:8787' }))

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()))
  workerErrors = []
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('presignOnThread', () => {
  it('signs on the worker exactly what the storage signs here (built-in store: PUT and GET)', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    const storage = threaded(local, { kind: 'local', secret: 's3cret' })
    // One turn's worth of jobs: they travel to the worker as one batch.
    // A GET in the same batch as the PUTs: its job carries no content type.
    const [get, ...puts] = await Promise.all([
      storage.presignGet({ key: 'c1/e0/video.mp4', now: NOW, expiresInSeconds: 900, origin: 'http://127.0.0.1:8787' }),
      ...jobs(40).map((job) => storage.presignPut(job)),
    ])
    for (const [i, job] of jobs(40).entries()) expect(puts[i]).toEqual(await local.presignPut(job))
    expect(get).toEqual(await local.presignGet({ key: 'c1/e0/video.mp4', now: NOW, expiresInSeconds: 900, origin: 'http://127.0.0.1:8787' }))
    expect(workerErrors).toEqual([]) // signed by the worker, not by the fallback
    expect(puts[0]!.url).toMatch(/^http:\/\/127\.0\.0\.1:8787\/storage\/c1\/e0\/video\.mp4\?X-Amz-Algorithm=AWS4-HMAC-SHA256&.*X-Amz-Signature=[0-9a-f]{64}$/)
  })

  it('signs on the worker exactly what an S3 store signs here, and leaves publicUrl to it', async () => {
    const s3 = createS3Storage({ ...S3, publicBaseUrl: 'https://cdn.example.com', sha256: NodeSha256 })
    const storage = threaded(s3, { kind: 's3', s3: { ...S3, publicBaseUrl: 'https://cdn.example.com' } })
    const [job] = jobs(1)
    expect(await storage.presignPut(job!)).toEqual(await s3.presignPut(job!))
    expect(storage.publicUrl('c1/e0/video.mp4')).toBe(s3.publicUrl('c1/e0/video.mp4'))
    expect(storage.handle).toBeUndefined()
    expect(workerErrors).toEqual([])
  })

  it('fails only the job the signer refuses, with its message', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    const storage = threaded(local, { kind: 'local', secret: 's3cret' })
    const [good, bad] = await Promise.allSettled([storage.presignPut(jobs(1)[0]!), storage.presignPut({ ...jobs(1)[0]!, expiresInSeconds: 0 })])
    expect(good.status).toBe('fulfilled')
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('expiresInSeconds must be an integer') } })
    expect(workerErrors).toEqual([])
  })

  it('signs on the main thread when the worker cannot start, and says so once', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    const errors: unknown[] = []
    const storage = threaded(local, { kind: 'local', secret: 's3cret' }, { workerUrl: pathToFileURL(join(dir, 'missing.mjs')), onWorkerError: (e) => errors.push(e) })
    const first = await Promise.all(jobs(5).map((job) => storage.presignPut(job)))
    const later = await storage.presignPut(jobs(1)[0]!)
    expect(first).toEqual(await Promise.all(jobs(5).map((job) => local.presignPut(job))))
    expect(later).toEqual(first[0])
    expect(errors).toHaveLength(1)
  })

  it('loses no job when the worker dies holding them', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    const dying = workerModule('dying.mjs', "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => process.exit(3))\n")
    const errors: unknown[] = []
    const storage = threaded(local, { kind: 'local', secret: 's3cret' }, { workerUrl: dying, onWorkerError: (e) => errors.push(e) })
    const signed = await Promise.all(jobs(10).map((job) => storage.presignPut(job)))
    expect(signed).toEqual(await Promise.all(jobs(10).map((job) => local.presignPut(job))))
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toContain('exited with code 3')
  })

  it('warm() starts the worker before any job: it resolves once the worker answers, and the worker signs', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    // A worker that counts the batches it gets and answers the way the real one does.
    const counting = workerModule(
      'counting.mjs',
      "import { parentPort } from 'node:worker_threads'\nlet batches = 0\n" +
        "const answer = (batch, n) => parentPort.postMessage({ id: batch.id, urls: batch.keys.map((key) => 'signed-by-worker/' + n + '/' + key), expiresAt: batch.keys.map(() => 0), errors: null })\n" +
        // The first batch is answered late, as a worker still loading would.
        "parentPort.on('message', (batch) => { const n = ++batches; if (n === 1) setTimeout(() => answer(batch, n), 150); else answer(batch, n) })\n",
    )
    const storage = threaded(local, { kind: 'local', secret: 's3cret' }, { workerUrl: counting })
    const started = performance.now()
    await storage.warm()
    expect(performance.now() - started).toBeGreaterThanOrEqual(140) // it waited for the answer
    await storage.warm() // again: one more empty batch, nothing else
    // The job is the worker's third batch: the two warm-ups came first, and it waited for no start.
    expect((await storage.presignPut(jobs(1)[0]!)).url).toBe('signed-by-worker/3/c1/e0/video.mp4')
    expect(workerErrors).toEqual([])
  })

  it('warm() reports a worker that cannot start at once, resolves, and leaves signing on the main thread', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    const errors: unknown[] = []
    const storage = threaded(local, { kind: 'local', secret: 's3cret' }, { workerUrl: pathToFileURL(join(dir, 'missing.mjs')), onWorkerError: (e) => errors.push(e) })
    await storage.warm()
    expect(errors).toHaveLength(1) // before any job was asked for
    expect(await storage.presignPut(jobs(1)[0]!)).toEqual(await local.presignPut(jobs(1)[0]!))
    await storage.warm() // already on the main thread: resolves at once
    expect(errors).toHaveLength(1)
  })

  it('warm() with the real worker: the first job after it is signed by the worker', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    const storage = threaded(local, { kind: 'local', secret: 's3cret' })
    await storage.warm()
    expect(await storage.presignPut(jobs(1)[0]!)).toEqual(await local.presignPut(jobs(1)[0]!))
    expect(workerErrors).toEqual([])
  })

  it('after close, signs on the main thread and never restarts the worker', async () => {
    const local = createLocalStorage({ files: FILES, secret: 's3cret', sha256: NodeSha256 })
    const errors: unknown[] = []
    const storage = threaded(local, { kind: 'local', secret: 's3cret' }, { onWorkerError: (e) => errors.push(e) })
    await storage.presignPut(jobs(1)[0]!) // the worker is up
    await storage.close()
    expect(await storage.presignPut(jobs(1)[0]!)).toEqual(await local.presignPut(jobs(1)[0]!))
    expect(errors).toEqual([])
  })
})
