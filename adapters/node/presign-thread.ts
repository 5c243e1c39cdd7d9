/**
 * Presigning on a worker thread. Node serves HTTP on one thread; signing an
 * open's three upload URLs is work that thread can hand off. The jobs of one
 * event-loop turn go to the worker as one message and come back as one; the
 * core inserts the episode meanwhile (src/ingest/routes.ts), so an open waits
 * for whichever of the two is slower rather than for both in turn.
 *
 * Measured with bench/ingest's load on two cores, 8 interleaved rounds
 * against signing on the main thread, both with node:crypto's one-shot
 * signer (~6.5 µs a URL): request p99 median 17.4 against 21.2 ms, the main
 * thread's CPU per request 141 against 180 µs and the whole process's 172
 * against 191 µs, pairs/s +16%. In the loaded server, signing in place cost
 * the main thread well beyond the ~6.5 µs a URL that bench/presign measures
 * alone; handing a batch over costs it ~3-5 µs a URL.
 *
 * Nothing is lost when the worker is not there: if it cannot start, or exits,
 * every job it held and every later one is signed on the main thread by the
 * wrapped storage, which also keeps serving `handle` and `publicUrl`.
 *
 * @example
 * const storage = presignOnThread(createLocalStorage({ files, secret }), { kind: 'local', secret })
 * const app = createApp({ db, storage })
 * // on shutdown
 * await storage.close()
 */
import { setImmediate } from 'node:timers'
import { Worker } from 'node:worker_threads'
import { createLocalStorage } from '../../src/storage/local.ts'
import { createS3Storage, type S3StorageOptions } from '../../src/storage/s3.ts'
import type { BlobFiles, ObjectStorage, PresignInput, SignedUrl } from '../../src/storage/types.ts'
import { NodeSha256 } from './sha256.ts'

/** What the worker needs to build the same signer (structured-cloneable: no functions). */
export type SigningSpec = { kind: 's3'; s3: Omit<S3StorageOptions, 'sha256'> } | { kind: 'local'; secret: string; region?: string }

/** One URL to sign; `contentType` present means a PUT, absent a GET. */
export interface PresignJob {
  key: string
  contentType?: string
  now: number
  expiresInSeconds: number
  origin: string
}

/**
 * One turn's jobs on their way to the worker, as parallel arrays: cloning a
 * few arrays of strings and numbers costs about half what an object per job
 * does (measured there and back: ~2 against ~4-6 µs a URL).
 */
export interface PresignBatch {
  id: number
  keys: string[]
  /** A PUT's content type; null for a GET. */
  contentTypes: (string | null)[]
  now: number[]
  expiresInSeconds: number[]
  origins: string[]
}

/** The worker's reply to a batch: entry `i` answers job `i`. */
export interface PresignReply {
  id: number
  /** '' where the job failed. */
  urls: string[]
  expiresAt: number[]
  /** Null when every job was signed; else each failed job's message at its index. */
  errors: (string | null)[] | null
}

/** A batch of `jobs` for the wire. */
export function batchOf(id: number, jobs: readonly PresignJob[]): PresignBatch {
  const batch: PresignBatch = { id, keys: [], contentTypes: [], now: [], expiresInSeconds: [], origins: [] }
  for (const job of jobs) {
    batch.keys.push(job.key)
    batch.contentTypes.push(job.contentType ?? null)
    batch.now.push(job.now)
    batch.expiresInSeconds.push(job.expiresInSeconds)
    batch.origins.push(job.origin)
  }
  return batch
}

/** The jobs of a batch off the wire. */
export function jobsOf(batch: PresignBatch): PresignJob[] {
  return batch.keys.map((key, i) => ({
    key,
    contentType: batch.contentTypes[i] ?? undefined,
    now: batch.now[i]!,
    expiresInSeconds: batch.expiresInSeconds[i]!,
    origin: batch.origins[i]!,
  }))
}

/** An `ObjectStorage` that presigns on a worker thread; `close()` stops the worker. */
export interface ThreadedStorage extends ObjectStorage {
  /**
   * Starts the worker now instead of at the first job, resolving once it has
   * loaded and answered (~0.3 s) or has failed (reported through
   * `onWorkerError`; signing then stays on the main thread). Never rejects.
   */
  warm(): Promise<void>
  close(): Promise<void>
}

export interface PresignThreadOptions {
  /** Told once when the worker fails and signing moves back to the main thread. */
  onWorkerError?: (error: unknown) => void
  /** The worker module; default ./presign-worker (.ts from source, .js when built). */
  workerUrl?: URL
}

/** The store a spec describes, hashing with node:crypto: the adapter's, and the worker's own copy (with no files). */
export function storageFromSpec(spec: SigningSpec, files: BlobFiles): ObjectStorage {
  if (spec.kind === 's3') return createS3Storage({ ...spec.s3, sha256: NodeSha256 })
  return createLocalStorage({ files, secret: spec.secret, region: spec.region, sha256: NodeSha256 })
}

/** Signs one job with `storage`: the worker's work, and the main thread's when the worker is gone. */
export function signJob(storage: ObjectStorage, job: PresignJob): Promise<SignedUrl> {
  const { key, contentType, expiresInSeconds, origin } = job
  const now = new Date(job.now)
  return contentType === undefined
    ? storage.presignGet({ key, now, expiresInSeconds, origin })
    : storage.presignPut({ key, contentType, now, expiresInSeconds, origin })
}

interface Waiting {
  job: PresignJob
  resolve(signed: SignedUrl): void
  reject(error: unknown): void
}

/**
 * Wraps `storage` so its presigning runs on a worker thread that builds the
 * same signer from `spec`. The worker starts with the first job.
 */
export function presignOnThread(storage: ObjectStorage, spec: SigningSpec, options: PresignThreadOptions = {}): ThreadedStorage {
  /** Batches at the worker, by id. */
  const sent = new Map<number, Waiting[]>()
  /** Jobs of this turn, not sent yet. */
  let queue: Waiting[] = []
  let nextBatch = 0
  let worker: Worker | undefined
  /** Once the worker has failed or been closed, everything is signed here. */
  let onMainThread = false
  /** `warm()` calls waiting for the worker's first answer (or its failure). */
  const warming: (() => void)[] = []
  const warmed = () => {
    for (const done of warming.splice(0)) done()
  }

  /** Signs everything the worker held (or was about to get) on this thread. */
  function fallBack(error?: unknown): void {
    if (!onMainThread && error !== undefined) options.onWorkerError?.(error)
    onMainThread = true
    worker = undefined
    warmed()
    const held = [...[...sent.values()].flat(), ...queue]
    sent.clear()
    queue = []
    for (const { job, resolve, reject } of held) signJob(storage, job).then(resolve, reject)
  }

  function start(): Worker {
    const started = spawnWorker(options.workerUrl ?? defaultWorkerUrl(), spec)
    started.unref() // an idle worker never keeps the process alive
    started.on('message', (reply: PresignReply) => {
      warmed()
      const entries = sent.get(reply.id)
      if (!entries) return // a warm-up batch
      sent.delete(reply.id)
      for (let i = 0; i < entries.length; i++) {
        const error = reply.errors?.[i]
        if (typeof error === 'string') entries[i]!.reject(new Error(error))
        else entries[i]!.resolve({ url: reply.urls[i]!, expiresAt: new Date(reply.expiresAt[i]!) })
      }
    })
    started.on('error', (error) => fallBack(error))
    started.on('exit', (code) => {
      if (worker === started) fallBack(new Error(`presign worker exited with code ${code}`))
    })
    return started
  }

  /** Sends `entries` as one batch (none: a warm-up the worker answers once loaded). */
  function send(entries: Waiting[]): void {
    const id = nextBatch++
    if (entries.length) sent.set(id, entries)
    try {
      ;(worker ??= start()).postMessage(batchOf(id, entries.map((entry) => entry.job)))
    } catch (error) {
      fallBack(error)
    }
  }

  function flush(): void {
    const entries = queue
    queue = []
    if (entries.length) send(entries) // none when the worker failed meanwhile: fallBack signed them
  }

  function submit(job: PresignJob): Promise<SignedUrl> {
    if (onMainThread) return signJob(storage, job)
    return new Promise((resolve, reject) => {
      if (!queue.length) setImmediate(flush)
      queue.push({ job, resolve, reject })
    })
  }

  const jobOf = (input: PresignInput, contentType?: string): PresignJob => ({
    key: input.key,
    contentType,
    now: input.now.getTime(),
    expiresInSeconds: input.expiresInSeconds,
    origin: input.origin,
  })

  return {
    presignPut: (input) => submit(jobOf(input, input.contentType)),
    presignGet: (input) => submit(jobOf(input)),
    publicUrl: (key) => storage.publicUrl(key),
    ...(storage.handle ? { handle: storage.handle.bind(storage) } : {}),
    warm() {
      if (onMainThread) return Promise.resolve()
      return new Promise<void>((resolve) => {
        warming.push(resolve)
        send([])
      })
    },
    async close() {
      const running = worker
      fallBack()
      await running?.terminate()
    },
  }
}

/** ./presign-worker next to this module: .ts in a source checkout, .js in the built package. */
function defaultWorkerUrl(): URL {
  const here = import.meta.url
  return new URL(/\.[cm]?ts$/.test(new URL(here).pathname) ? './presign-worker.ts' : './presign-worker.js', here)
}

function spawnWorker(url: URL, spec: SigningSpec): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { workerData: spec })
  // A source checkout runs under tsx (`npm start`) or vitest, whose module
  // hooks do not reach worker threads on Node 20: register tsx's there first.
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}) })`
  return new Worker(bootstrap, { eval: true, workerData: spec })
}
