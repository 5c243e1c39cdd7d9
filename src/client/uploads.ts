/**
 * Robot-scale uploads with the client library: `uploadArtifact` sends one
 * artifact, as a single PUT up to a threshold (default 64 MiB) and as a
 * multipart upload above it: parts in parallel (default 4), each retried
 * with exponential backoff, URLs re-minted when they expire, and an upload
 * interrupted earlier resumed from the parts the store already holds.
 * `recordEpisode` opens an episode (with an `Idempotency-Key`, so a retry
 * never makes a second one), uploads its artifacts and finalizes it with
 * `bytes_total`.
 *
 * Files come in as `Blob`s, which every runtime reads lazily from disk
 * (`openDiskFile(path)` from `episodic/node` in Node, not Node 20's
 * `fs.openAsBlob`, which wraps sizes of 4 GiB and more; `Bun.file(path)`, `Deno.openSync` +
 * `new Response(...).blob()` or a `File`), so no part is read before it is sent.
 *
 * @example
 * const client = await EpisodicClient.connect()
 * const video = await openDiskFile('run.mp4')
 * const { episode_id } = await recordEpisode(client, { episode: { robot: 'arm-1' }, artifacts: { video }, idempotencyKey: 'run-42' })
 */
import { md5 } from '@noble/hashes/legacy.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { ARTIFACT_CONTENT_TYPE, type ArtifactKind } from '../storage/types.ts'
import type { EpisodicClient, FinalizeEpisodeRequest, FinalizeEpisodeResult, OpenEpisodeRequest, SignedPutResult, UploadUrlEntry } from './client.ts'
import { ConfigurationError, NotFoundError, ServerError, TransportError, ValidationError } from './errors.ts'
import { retrying } from './retry.ts'

const MiB = 1024 * 1024
/** A URL is refreshed when it has less than this left. */
const EXPIRY_MARGIN_MS = 60_000

/** How `uploadArtifact` and `recordEpisode` send bytes; every field has a default. */
export interface UploadOptions {
  /** Above this size an artifact goes multipart (default 64 MiB). */
  multipartThreshold?: number
  /** Bytes per part (5 MiB .. 5 GiB; default the server's: 64 MiB, more for artifacts past 625 GiB so they fit 10,000 parts). */
  partSize?: number
  /** Parts in flight at once (default 4). */
  concurrency?: number
  /** Attempts per PUT before giving up (default 6). */
  attempts?: number
  /** First backoff; doubled after each failed attempt, with jitter (default 500 ms). */
  backoffMs?: number
  /** Told as bytes go out (bytes of a failed attempt are taken back). */
  onProgress?: (progress: { kind: ArtifactKind; sent: number; total: number }) => void
  /** Told the upload id as soon as a multipart upload exists, to resume it after a crash. */
  onMultipart?: (kind: ArtifactKind, uploadId: string, episodeId: string) => void
  /** Stops every request in flight; the returned promise rejects with the signal's reason. */
  signal?: AbortSignal
  /** Waits between attempts (default setTimeout); tests pass a fake. */
  sleep?: (ms: number) => Promise<void>
  /**
   * Sends one PUT (default: the client's `fetch`, streaming the range of the
   * `Blob`). The CLI passes a Node transport that reads the file itself
   * (`nodeUploadTransport`); retries, expiry and progress stay here.
   */
  put?: PutTransport
}

/** One PUT of a byte range of an artifact to a signed URL, as `UploadOptions.put` receives it. */
export interface PutRequest {
  /** The signed URL (no `Authorization` header goes with it). */
  url: string
  /** The whole artifact as `uploadArtifact` got it; the PUT sends `length` bytes of it from `offset`. */
  body: Blob
  /** First byte of the range. */
  offset: number
  /** Bytes in the range (sent as `Content-Length`). */
  length: number
  /** `Content-Type` of a single PUT; parts have none. */
  contentType?: string
  /** Aborts the request. */
  signal?: AbortSignal
  /** Called with each chunk's byte count as it goes out. */
  onBytes(n: number): void
}

/**
 * Sends a `PutRequest` and returns what object storage answered (HTTP errors
 * as results, not exceptions); throws `TransportError` when the network
 * fails, and the signal's reason when aborted.
 */
export type PutTransport = (request: PutRequest) => Promise<SignedPutResult>

/** One artifact to send. */
export interface ArtifactUpload {
  /** The open episode the artifact belongs to. */
  episodeId: string
  /** Which artifact: `video`, `sensors` or `actions`. */
  kind: ArtifactKind
  /** The bytes to upload; large bodies go up in parts. */
  body: Blob
  /** The URL open handed out, if still fresh; otherwise one is minted. */
  url?: Pick<UploadUrlEntry, 'url' | 'expires_at'>
  /** A multipart upload started earlier for this artifact: resumed from its stored parts. */
  uploadId?: string
}

/** What an artifact upload did. */
export interface ArtifactUploaded {
  /** Which artifact was uploaded. */
  kind: ArtifactKind
  /** Its size in bytes. */
  size: number
  /** The entity tag object storage returned for it. */
  etag: string
  /** Set for a multipart upload. */
  uploadId?: string
  /** Parts found already stored (a resumed upload). */
  resumedParts: number
}

type Resolved =
  & Required<Omit<UploadOptions, 'onProgress' | 'onMultipart' | 'signal' | 'put' | 'partSize'>>
  & Pick<UploadOptions, 'onProgress' | 'onMultipart' | 'signal' | 'put' | 'partSize'>

function resolve(options: UploadOptions): Resolved {
  return {
    multipartThreshold: 64 * MiB,
    concurrency: 4,
    attempts: 6,
    backoffMs: 500,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    ...options,
  }
}

/** Uploads one artifact (single PUT or multipart, by size). */
export function uploadArtifact(client: EpisodicClient, upload: ArtifactUpload, options: UploadOptions = {}): Promise<ArtifactUploaded> {
  const o = resolve(options)
  if (upload.uploadId !== undefined || upload.body.size > o.multipartThreshold) return uploadMultipart(client, upload, o)
  return uploadSingle(client, upload, o)
}

/** The default `PutTransport`: the client's `fetch`, streaming the range. */
function fetchPut(client: EpisodicClient, request: PutRequest): Promise<SignedPutResult> {
  const { body, offset, length } = request
  const range = offset === 0 && length === body.size ? body : body.slice(offset, offset + length)
  return client.signedPut(request.url, counted(range, request.onBytes), { contentType: request.contentType, contentLength: length, signal: request.signal })
}

/** Counts bytes of `blob` as they stream out, for the progress callback. */
function counted(blob: Blob, onBytes: (n: number) => void): ReadableStream<Uint8Array> {
  return blob.stream().pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (chunk, c) => (onBytes(chunk.byteLength), c.enqueue(chunk)) }))
}

/** True for answers a retry may fix: the network, 5xx, throttling. */
const retryable = (result: SignedPutResult) => result.status >= 500 || result.status === 429 || result.status === 408
/** True for a signed URL that has run out (S3: 403 AccessDenied "Request has expired"). */
const expired = (result: SignedPutResult) => result.status === 403 && result.code === 'AccessDenied'

/**
 * One PUT with retries: transport failures and 5xx back off and retry; an
 * expired URL is re-minted (`refresh`) and retried; anything else throws.
 */
async function putWithRetries(
  client: EpisodicClient,
  o: Resolved,
  what: string,
  body: Blob,
  [offset, length]: [number, number],
  contentType: string | undefined,
  url: () => Promise<string>,
  refresh: () => Promise<void>,
  onBytes: (n: number) => void,
): Promise<string> {
  let lastError = ''
  let lastStatus: number | undefined
  for (let attempt = 1; attempt <= o.attempts; attempt++) {
    o.signal?.throwIfAborted()
    let sent = 0
    let result: SignedPutResult | undefined
    try {
      const request: PutRequest = { url: await url(), body, offset, length, contentType, signal: o.signal, onBytes: (n) => ((sent += n), onBytes(n)) }
      result = o.put ? await o.put(request) : await fetchPut(client, request)
    } catch (error) {
      if (o.signal?.aborted) throw o.signal.reason
      if (!(error instanceof TransportError)) throw error
      lastError = error.message
      lastStatus = undefined
    }
    if (result && result.status >= 200 && result.status < 300) return (result.etag ?? '').replace(/"/g, '')
    onBytes(-sent)
    if (result && expired(result)) {
      await refresh()
      lastError = `${result.code}: ${result.message}`
      continue
    }
    if (result && !retryable(result)) throw new ValidationError(`${what} refused by object storage (${result.status}): ${result.message}`, result.status)
    if (result) {
      lastError = `${result.status} ${result.message}`
      lastStatus = result.status
    }
    if (attempt < o.attempts) await o.sleep(o.backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5))
  }
  const message = `${what} failed after ${o.attempts} attempts: ${lastError}`
  // The store answered, with a 5xx or 429, to the last attempt: a server error, not the network's.
  throw lastStatus === undefined ? new TransportError(message) : new ServerError(message, lastStatus)
}

async function uploadSingle(client: EpisodicClient, upload: ArtifactUpload, o: Resolved): Promise<ArtifactUploaded> {
  const { episodeId, kind, body } = upload
  let entry = upload.url
  const fresh = () => entry !== undefined && Date.parse(entry.expires_at) - Date.now() > EXPIRY_MARGIN_MS
  const refresh = async () => {
    entry = (await client.uploadUrls(episodeId, [kind])).upload_urls[0]
    if (entry === undefined) throw new ConfigurationError(noStorage(episodeId, [kind]))
  }
  let sent = 0
  const etag = await putWithRetries(
    client,
    o,
    `upload of ${kind}`,
    body,
    [0, body.size],
    ARTIFACT_CONTENT_TYPE[kind],
    async () => {
      if (!fresh()) await refresh()
      return entry!.url
    },
    refresh,
    (n) => ((sent += n), o.onProgress?.({ kind, sent, total: body.size })),
  )
  return { kind, size: body.size, etag, resumedParts: 0 }
}

async function uploadMultipart(client: EpisodicClient, upload: ArtifactUpload, o: Resolved): Promise<ArtifactUploaded> {
  const { episodeId, kind, body } = upload
  let plan: { uploadId: string; partSize: number; partCount: number; expiresAt: number }
  const urls = new Map<number, string>()
  const etags = new Map<number, string>()
  let resumed = 0
  const resume = async (uploadId: string) => {
    const state = await client.resumeMultipart(episodeId, uploadId)
    plan = { uploadId, partSize: state.part_size, partCount: state.part_count, expiresAt: Date.parse(state.expires_at) }
    for (const part of state.parts) urls.set(part.part_number, part.url)
    return state
  }
  let state = upload.uploadId !== undefined
    ? await resume(upload.uploadId).catch((error) => (error instanceof NotFoundError ? null : Promise.reject(error)))
    : null
  // An upload planned for a file of another size cannot hold this one: start afresh (its parts go).
  if (state && Math.max(1, Math.ceil(body.size / state.part_size)) !== state.part_count) {
    await client.abortMultipart(episodeId, state.upload_id).catch(() => {})
    urls.clear()
    state = null
  }
  if (state) {
    for (const part of state.uploaded) etags.set(part.part_number, part.etag)
    resumed = state.uploaded.length
  } else {
    const created = await client.createMultipart(episodeId, { kind, size: body.size, part_size: o.partSize })
    plan = { uploadId: created.upload_id, partSize: created.part_size, partCount: created.part_count, expiresAt: Date.parse(created.expires_at) }
    for (const part of created.parts) urls.set(part.part_number, part.url)
    o.onMultipart?.(kind, created.upload_id, episodeId)
  }
  const p = plan!
  // One refresh at a time, shared by every part that found its URL stale.
  let refreshing: Promise<unknown> | undefined
  const refresh = () => (refreshing ??= resume(p.uploadId).finally(() => (refreshing = undefined)))

  let sent = 0
  const report = (n: number) => ((sent += n), o.onProgress?.({ kind, sent, total: body.size }))
  const sizeOf = (n: number) => Math.min(p.partSize, body.size - (n - 1) * p.partSize)
  for (const n of etags.keys()) report(sizeOf(n))

  const queue = Array.from({ length: p.partCount }, (_, i) => i + 1).filter((n) => !etags.has(n))
  // The first part that fails for good stops the others: no part starts after it, those in
  // flight are aborted, and the error is thrown once every worker has stopped.
  const stop = new AbortController()
  const onAbort = () => stop.abort(o.signal!.reason)
  if (o.signal?.aborted) onAbort()
  else o.signal?.addEventListener('abort', onAbort, { once: true })
  const partOptions = { ...o, signal: stop.signal }
  let failure: { error: unknown } | undefined
  const worker = async () => {
    try {
      await putParts()
    } catch (error) {
      failure ??= { error }
      queue.length = 0
      stop.abort(error)
    }
  }
  const putParts = async () => {
    for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
      const start = (n - 1) * p.partSize
      const partNumber = n
      const etag = await putWithRetries(
        client,
        partOptions,
        `part ${n} of ${kind}`,
        body,
        [start, sizeOf(n)],
        undefined,
        async () => {
          if (plan.expiresAt - Date.now() < EXPIRY_MARGIN_MS) await refresh()
          return urls.get(partNumber)!
        },
        async () => void (await refresh()),
        report,
      )
      etags.set(n, etag)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, queue.length)) }, worker))
  o.signal?.removeEventListener('abort', onAbort)
  if (failure) throw failure.error
  const parts = [...etags].sort(([a], [b]) => a - b).map(([part_number, etag]) => ({ part_number, etag }))
  const done = await client.completeMultipart(episodeId, p.uploadId, { parts })
  if (done.size !== body.size) {
    throw new ConfigurationError(
      `${kind}: the store assembled ${done.size} bytes from the upload's parts, but the file has ${body.size}: it changed since the upload began; upload it again without resuming`,
    )
  }
  return { kind, size: done.size, etag: done.etag, uploadId: p.uploadId, resumedParts: resumed }
}

/** Everything `recordEpisode` needs. */
export interface RecordEpisode {
  /** The open body; `request_uploads` defaults to the kinds in `artifacts`. */
  episode?: OpenEpisodeRequest
  /** The artifacts to upload, by kind; kinds left out are not uploaded. */
  artifacts: Partial<Record<ArtifactKind, Blob>>
  /** Extra finalize fields; `bytes_total` defaults to the sum of the artifact sizes. */
  finalize?: FinalizeEpisodeRequest
  /** Makes the whole call safe to repeat: the same key reopens the same episode. */
  idempotencyKey?: string
  /** Finalize with `verify_artifacts: true` (the service checks the store first). */
  verify?: boolean
  /** Multipart uploads started by an earlier, interrupted call (see `onMultipart`), resumed from their parts. */
  uploads?: Partial<Record<ArtifactKind, string>>
}

/** What `recordEpisode` did. */
export interface RecordedEpisode {
  /** The id of the episode that was opened (or reopened) and finalized. */
  episode_id: string
  /** True when the open was a replay of an earlier call with the same key. */
  reopened: boolean
  /**
   * One entry per artifact; `skipped` when a reopened episode already had it
   * stored, with `sizeOnly` when only its size could be compared (a multipart
   * object's ETag names its parts, not the file: a file rewritten with the
   * same size goes unnoticed).
   */
  uploads: (ArtifactUploaded & { skipped: boolean; sizeOnly?: boolean })[]
  /** The finalize response. */
  finalized: FinalizeEpisodeResult
}

/**
 * Opens, uploads and finalizes one episode. With an `idempotencyKey` a
 * repeated call (after a crash, a timeout or Ctrl-C) reopens the same
 * episode, skips artifacts the store already holds whole, and resumes
 * multipart uploads named in `uploads`. Without one, an upload that fails
 * (or is aborted) leaves its episode `failed`, not `recording`.
 */
export async function recordEpisode(client: EpisodicClient, input: RecordEpisode, options: UploadOptions = {}): Promise<RecordedEpisode> {
  if (input === null || typeof input !== 'object' || input.artifacts === null || typeof input.artifacts !== 'object') {
    // The same name in episodic/replay takes { episode, sensors, actions }: say which this one wants.
    throw new ConfigurationError(
      "recordEpisode(client, { episode, artifacts }): artifacts must be an object of kind -> Blob ({ sensors, actions, video }; {} for none); for arrays to write as .npz, use episodic/replay's recordEpisode",
    )
  }
  const o = resolve(options)
  const kinds = (Object.keys(input.artifacts) as ArtifactKind[]).filter((k) => input.artifacts[k] !== undefined)
  const body: OpenEpisodeRequest = { ...input.episode, request_uploads: input.episode?.request_uploads ?? kinds }
  const opened = await openWithRetries(client, body, input.idempotencyKey, o)
  const episodeId = opened.episode_id
  // The spec: a client that needs uploads fails loudly on "unconfigured".
  if (kinds.length > 0 && opened.storage === 'unconfigured') throw new ConfigurationError(noStorage(episodeId, kinds))
  // On a replay, what is already stored whole need not be sent again.
  const stored = opened.reopened ? new Map((await client.listArtifacts(episodeId)).artifacts.filter((a) => a.present).map((a) => [a.kind, a])) : new Map()
  const uploads: RecordedEpisode['uploads'] = []
  try {
    for (const kind of kinds) {
      const blob = input.artifacts[kind]!
      const held = stored.get(kind)
      if (held?.size === blob.size && await sameBytes(held.etag, blob, o)) {
        // A multipart upload saved for resuming was completed already (or outlived by the stored
        // object): the object is what counts; the upload, if it still exists, is aborted.
        const stale = input.uploads?.[kind]
        if (stale !== undefined) await client.abortMultipart(episodeId, stale).catch(() => {})
        o.onProgress?.({ kind, sent: blob.size, total: blob.size })
        uploads.push({ kind, size: blob.size, etag: '', resumedParts: 0, skipped: true, ...(comparable(held.etag, blob, o) ? {} : { sizeOnly: true }) })
        continue
      }
      const url = opened.upload_urls.find((entry) => entry.kind === kind)
      const done = await uploadArtifact(client, { episodeId, kind, body: blob, url, uploadId: input.uploads?.[kind] }, o)
      uploads.push({ ...done, skipped: false })
    }
  } catch (error) {
    // Without a key nothing can come back to this episode: it is marked failed (best effort)
    // rather than left recording for ever. With one, the same call resumes it.
    if (input.idempotencyKey === undefined) await client.finalizeEpisode(episodeId, { status: 'failed' }).catch(() => {})
    throw error
  }
  const bytesTotal = kinds.reduce((sum, kind) => sum + input.artifacts[kind]!.size, 0)
  const finalized = await client.finalizeEpisode(episodeId, { bytes_total: bytesTotal, ...input.finalize, ...(input.verify ? { verify_artifacts: true } : {}) })
  return { episode_id: episodeId, reopened: opened.reopened, uploads, finalized }
}

/**
 * Whether a stored object of the file's size holds the file's bytes: a
 * single-PUT object's ETag is the MD5 of its bytes (S3, R2, the built-in
 * store), so a file up to the multipart threshold is hashed and compared (a
 * file rewritten with the same size is sent again); a multipart ETag
 * (`...-N`) says nothing checkable here, and the size stands.
 */
async function sameBytes(etag: string | null, blob: Blob, o: Resolved): Promise<boolean> {
  if (!comparable(etag, blob, o)) return true
  return bytesToHex(md5(new Uint8Array(await blob.arrayBuffer()))) === etag!.replace(/"/g, '').toLowerCase()
}

/** Whether a stored object's ETag can tell if it holds `blob`: a single-PUT MD5, for a file up to the multipart threshold. */
function comparable(etag: string | null, blob: Blob, o: Resolved): boolean {
  const hex = etag?.replace(/"/g, '').toLowerCase()
  return hex !== undefined && /^[0-9a-f]{32}$/.test(hex) && blob.size <= o.multipartThreshold
}

/** Why nothing can be uploaded to a service without object storage, naming the episode left `recording`. */
function noStorage(episodeId: string, kinds: readonly ArtifactKind[]): string {
  return `the service has no object storage (storage "unconfigured"), so ${kinds.join(', ')} cannot be uploaded; episode ${episodeId} stays recording`
}

/** Opens; with a key, retries what a retry can fix (network, 5xx, a first attempt still running). */
async function openWithRetries(client: EpisodicClient, body: OpenEpisodeRequest, idempotencyKey: string | undefined, o: Resolved) {
  let attempts = 0
  const open = async () => {
    o.signal?.throwIfAborted()
    attempts++
    let reopened = false
    const opened = await client.openEpisode(body, { idempotencyKey, onReplayed: () => (reopened = true) })
    return { ...opened, reopened: reopened || attempts > 1 }
  }
  // Only a keyed open is safe to send again (a 409 then means its first try is still running).
  return idempotencyKey === undefined ? await open() : await retrying(open, o, true)
}
