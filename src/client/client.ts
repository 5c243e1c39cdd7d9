/**
 * A typed client for every endpoint of the service. Request and response
 * types come from the server's own valibot schemas, so the two cannot drift.
 * HTTP failures become the library's error classes (401 AuthError, 404
 * NotFoundError, 400/413 ValidationError, 409 ConflictError, 5xx ServerError,
 * network failures TransportError). A `seed` is exact over the signed 64-bit
 * range: pass a `bigint` beyond 2^53; one comes back as a `bigint` too.
 *
 * @example
 * const client = await EpisodicClient.connect()            // env or credentials file
 * const opened = await client.openEpisode({ robot: 'arm-1', request_uploads: ['actions'] })
 * await client.upload(opened.upload_urls[0], bytes)
 * await client.finalizeEpisode(opened.episode_id, { duration_s: 12.5 })
 */
import { parseApiKey } from '../auth/keys.ts'
import { jsonText, parseJson } from '../http/json.ts'
import { type ClientOptions, resolveClientConfig } from './config.ts'
import { AuthError, ConflictError, NotFoundError, ServerError, TransportError, ValidationError } from './errors.ts'
import { readSizedBody } from './download.ts'
import { ARTIFACT_CONTENT_TYPE } from '../storage/types.ts'

// The wire types are the interfaces the server's valibot schemas are typed
// with (episodes/*-schemas.ts, eval/schemas.ts), so client and server cannot
// drift; they are re-exported here under the names the client has used.
import type { Episode, FinalizeEpisodeInput, FinalizeEpisodeResult, OpenEpisodeInput, OpenEpisodeResult, UploadUrlEntry } from '../episodes/ingest-schemas.ts'
import type { ArtifactAccess, EpisodePage, ListEpisodesParams } from '../episodes/schemas.ts'
export type { ArtifactAccess } from '../episodes/schemas.ts'
import type {
  CreatedEvalRun,
  CreateEvalRunInput,
  EvalResult,
  EvalRunDetail,
  EvalRunInfo,
  EvalRunPage,
  FinalizedEvalRun,
  ListEvalRunsParams,
  UploadResultInput,
  UploadResultResult,
} from '../eval/schemas.ts'
import type { MetricBlob, MetricOutcomeSource } from '../eval/metric-blob.ts'
import type { ActionDivergence, EpisodeCounts, MetricName, MetricSummary, ResultStatus, RollupSummary, Verdict } from '../eval/rollup.ts'
import type {
  ArtifactsResult,
  ArtifactState,
  CompleteMultipartInput,
  CompleteMultipartResult,
  CreateMultipartInput,
  CreateMultipartResult,
  PartUrl,
  ResumeMultipartResult,
  UploadedPart,
  UploadUrlsResult,
} from '../episodes/upload-schemas.ts'
import type { ArtifactKind } from '../storage/types.ts'
import type { EpisodeSource, EpisodeStatus } from '../db/schema.ts'

export type {
  ActionDivergence,
  ArtifactKind,
  ArtifactsResult,
  ArtifactState,
  CompleteMultipartInput,
  CompleteMultipartResult,
  CreatedEvalRun,
  CreateEvalRunInput,
  CreateMultipartInput,
  CreateMultipartResult,
  Episode,
  EpisodeCounts,
  EpisodePage,
  EpisodeSource,
  EpisodeStatus,
  EvalResult,
  EvalRunDetail,
  EvalRunInfo,
  EvalRunPage,
  FinalizedEvalRun,
  FinalizeEpisodeInput,
  FinalizeEpisodeResult,
  ListEpisodesParams,
  ListEvalRunsParams,
  MetricBlob,
  MetricName,
  MetricOutcomeSource,
  MetricSummary,
  OpenEpisodeInput,
  OpenEpisodeResult,
  PartUrl,
  ResultStatus,
  ResumeMultipartResult,
  RollupSummary,
  UploadedPart,
  UploadResultInput,
  UploadResultResult,
  UploadUrlEntry,
  UploadUrlsResult,
  Verdict,
}

/** Body of `openEpisode` (`POST /api/ingest/episode`); every field optional. */
export type OpenEpisodeRequest = OpenEpisodeInput
/** Body of `finalizeEpisode`; every field optional. */
export type FinalizeEpisodeRequest = FinalizeEpisodeInput
/** `GET /api/episodes` parameters; `metadata.<key>` ones filter on metadata (`{ 'metadata.task': 'reach' }`, see docs/portal.md). */
export type ListEpisodesRequest = Partial<Record<keyof ListEpisodesParams, string | number>> & {
  [filter: `metadata.${string}`]: string | number | undefined
}
/** `GET /api/eval-runs` parameters (`limit`, `cursor`, `status`, version and time filters). */
export type ListEvalRunsRequest = Partial<Record<keyof ListEvalRunsParams, string | number>>
/** Body of `createEvalRun` (`POST /api/ingest/eval-run`). */
export type CreateEvalRunRequest = CreateEvalRunInput
/** Body of `uploadResult`: one baseline's outcome and metrics. */
export type UploadResultRequest = UploadResultInput
/** `getEvalRun`'s answer: the run with one result row per baseline. */
export type EvalRun = EvalRunDetail
/** Body of `createMultipart`: the artifact kind, its size and the part size. */
export type CreateMultipartRequest = CreateMultipartInput
/** `createMultipart`'s answer: the upload id and one presigned PUT URL per part. */
export type MultipartUpload = CreateMultipartResult
/** `resumeMultipart`'s answer: parts already stored and fresh URLs for the rest. */
export type ResumedMultipartUpload = ResumeMultipartResult
/** Body of `completeMultipart`: every part's number and ETag, ascending. */
export type CompleteMultipartRequest = CompleteMultipartInput
/** `completeMultipart`'s answer: the assembled object's size and ETag. */
export type CompletedMultipartUpload = CompleteMultipartResult
/** `listArtifacts`' answer: each kind's state in the store. */
export type EpisodeArtifacts = ArtifactsResult
/** Per-call options of the create endpoints. */
export interface CreateOptions {
  /** Sent as `Idempotency-Key`: a retry with the same key gets the first answer (same ids). */
  idempotencyKey?: string
  /** Called when the answer is such a replay (`Idempotency-Replayed: true`). */
  onReplayed?: () => void
}
/** Per-call options of `downloadArtifact`. */
export interface DownloadOptions {
  /** Where a body of known length lands: returns a buffer of exactly that many bytes (default: a new one). */
  allocate?: (length: number) => Uint8Array
}
/** What a PUT to a signed URL answered; HTTP errors are returned, not thrown (the caller decides to retry). */
export interface SignedPutResult {
  /** HTTP status object storage answered (200 on success). */
  status: number
  /** The stored object's or part's ETag; `null` on failure. */
  etag: string | null
  /** S3's error code on failure (`AccessDenied`, `SignatureDoesNotMatch`, ...). */
  code: string | null
  /** S3's error message on failure; empty on success. */
  message: string
}

/** The client for one API key and base URL. */
export class EpisodicClient {
  /** The service's base URL, without a trailing slash. */
  readonly baseUrl: string
  readonly #apiKey: string
  readonly #fetch: typeof fetch

  /** A client for one API key and base URL; `fetch` defaults to the global one. `connect` resolves these from the environment. */
  constructor(config: { apiKey: string; baseUrl: string; fetch?: typeof fetch }) {
    this.baseUrl = config.baseUrl.replace(/\/+$/, '')
    this.#apiKey = config.apiKey
    this.#fetch = config.fetch ?? globalThis.fetch.bind(globalThis)
  }

  /**
   * The API key's id, its public part (`epk_<key id>_<secret>`), or null for
   * a key of another form: names the credential without its secret (the CLI
   * keys its resume state by it, whichever instance URL it reaches).
   */
  get keyId(): string | null {
    return parseApiKey(this.#apiKey)?.keyId ?? null
  }

  /** Builds a client from options, the environment or the credentials file (see `resolveClientConfig`). */
  static async connect(options: ClientOptions = {}): Promise<EpisodicClient> {
    const config = await resolveClientConfig(options)
    return new EpisodicClient({ ...config, fetch: options.fetch })
  }

  /** The portal page of an eval run. */
  portalUrl(evalRunId: string): string {
    return `${this.baseUrl}/portal/eval-runs/${evalRunId}`
  }

  /** Opens an episode; returns its id and signed upload URLs. `ValidationError` on a bad body; an `idempotencyKey` makes retries safe. */
  openEpisode(body: OpenEpisodeRequest = {}, options: CreateOptions = {}): Promise<OpenEpisodeResult> {
    return this.#json('POST', '/api/ingest/episode', body, idempotencyHeader(options), options.onReplayed)
  }

  /** Fresh upload URLs for a `recording` or `failed` episode (default: the kinds requested at open). */
  uploadUrls(episodeId: string, kinds?: ArtifactKind[]): Promise<UploadUrlsResult> {
    return this.#json('POST', `/api/ingest/episode/${encodeURIComponent(episodeId)}/upload-urls`, kinds ? { kinds } : {})
  }

  /** Starts a multipart upload: one presigned PUT URL per part. */
  createMultipart(episodeId: string, body: CreateMultipartRequest): Promise<MultipartUpload> {
    return this.#json('POST', `/api/ingest/episode/${encodeURIComponent(episodeId)}/multipart`, body)
  }

  /** The parts a multipart upload holds, and fresh URLs for the others. */
  resumeMultipart(episodeId: string, uploadId: string): Promise<ResumedMultipartUpload> {
    return this.#json('GET', `/api/ingest/episode/${encodeURIComponent(episodeId)}/multipart/${encodeURIComponent(uploadId)}`)
  }

  /** Joins the uploaded parts (ascending, each with the ETag its PUT answered) into the artifact; throws when a part is missing or an ETag does not match. */
  completeMultipart(episodeId: string, uploadId: string, body: CompleteMultipartRequest): Promise<CompletedMultipartUpload> {
    return this.#json('POST', `/api/ingest/episode/${encodeURIComponent(episodeId)}/multipart/${encodeURIComponent(uploadId)}/complete`, body)
  }

  /** Abandons a multipart upload and its stored parts. */
  async abortMultipart(episodeId: string, uploadId: string): Promise<void> {
    await this.#json('DELETE', `/api/ingest/episode/${encodeURIComponent(episodeId)}/multipart/${encodeURIComponent(uploadId)}`)
  }

  /** Which artifacts the store holds (a HEAD on each), with sizes. */
  listArtifacts(episodeId: string): Promise<EpisodeArtifacts> {
    return this.#json('GET', `/api/episodes/${encodeURIComponent(episodeId)}/artifacts`)
  }

  /**
   * PUTs bytes to a signed URL (an upload URL or a part URL) and reports what
   * object storage answered, without throwing on HTTP errors. A stream body
   * needs `contentLength` (object storage refuses uploads of unknown length).
   */
  async signedPut(
    url: string,
    body: Blob | Uint8Array | ReadableStream<Uint8Array>,
    options: { contentType?: string; contentLength?: number; signal?: AbortSignal } = {},
  ): Promise<SignedPutResult> {
    const headers: Record<string, string> = {}
    if (options.contentType) headers['content-type'] = options.contentType
    if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength)
    const init: RequestInit & { duplex?: 'half' } = { method: 'PUT', headers, body: body as BodyInit, signal: options.signal }
    if (body instanceof ReadableStream) init.duplex = 'half'
    const response = await this.#send(url, init, 'upload')
    return storageAnswer(response.status, response.headers.get('etag'), await response.text().catch(() => ''))
  }

  /** Marks an episode `ready` (default) or `failed`, merging `metadata`; `ConflictError` once archived. */
  finalizeEpisode(episodeId: string, body: FinalizeEpisodeRequest = {}): Promise<FinalizeEpisodeResult> {
    return this.#json('POST', `/api/ingest/episode/${encodeURIComponent(episodeId)}/finalize`, body)
  }

  /** One episode of this client; `NotFoundError` when unknown or another client's. */
  getEpisode(episodeId: string): Promise<Episode> {
    return this.#json('GET', `/api/episodes/${encodeURIComponent(episodeId)}`)
  }

  /** One page of this client's episodes, newest first; pass `next_cursor` as `cursor` for the next. */
  listEpisodes(query: ListEpisodesRequest = {}): Promise<EpisodePage> {
    return this.#json('GET', `/api/episodes${queryString(query)}`)
  }

  /**
   * PUTs an artifact to its signed URL (object storage, not the service): the
   * kind's Content-Type, no Authorization header, no retry (retrying is the
   * caller's decision). Streams when given a ReadableStream.
   */
  async upload(
    entry: Pick<UploadUrlEntry, 'kind' | 'url'>,
    body: Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | string,
  ): Promise<{ etag: string | null }> {
    const contentType = ARTIFACT_CONTENT_TYPE[entry.kind]
    const init: RequestInit & { duplex?: 'half' } = { method: 'PUT', headers: { 'content-type': contentType }, body: body as BodyInit }
    if (body instanceof ReadableStream) init.duplex = 'half'
    const response = await this.#send(entry.url, init, `upload of ${entry.kind}`)
    const text = await response.text()
    if (!response.ok) throw httpError(response.status, `upload of ${entry.kind} refused by object storage (${response.status}): ${s3Message(text)}`)
    return { etag: response.headers.get('etag') }
  }

  /** A fresh signed GET URL for an artifact (through the artifact route). */
  artifactUrl(episodeId: string, kind: ArtifactKind): Promise<ArtifactAccess> {
    return this.#json('GET', `/api/episodes/${encodeURIComponent(episodeId)}/artifact/${kind}`)
  }

  /** Downloads an artifact's bytes through a fresh signed URL (into `options.allocate`'s buffer when the length is known). */
  async downloadArtifact(episodeId: string, kind: ArtifactKind, options: DownloadOptions = {}): Promise<Uint8Array> {
    const { url } = await this.artifactUrl(episodeId, kind)
    const response = await this.#send(url, { method: 'GET' }, `download of ${kind} of episode ${episodeId}`)
    if (!response.ok) {
      const text = await response.text()
      if (response.status === 404) throw new NotFoundError(`episode ${episodeId} has no uploaded ${kind} artifact`)
      throw httpError(response.status, `download of ${kind} of episode ${episodeId} failed (${response.status}): ${s3Message(text)}`)
    }
    try {
      return await readSizedBody(response, options.allocate)
    } catch (error) {
      throw new TransportError(`download of ${kind} of episode ${episodeId} was cut off: ${(error as Error).message}`, { cause: error })
    }
  }

  /** Creates an eval run against baseline episodes; `NotFoundError` when any baseline is unknown. */
  createEvalRun(body: CreateEvalRunRequest, options: CreateOptions = {}): Promise<CreatedEvalRun> {
    return this.#json('POST', '/api/ingest/eval-run', body, idempotencyHeader(options), options.onReplayed)
  }

  /** Stores one baseline's result (a retry replaces it); `ConflictError` once the run is finalized. */
  uploadResult(evalRunId: string, body: UploadResultRequest): Promise<UploadResultResult> {
    return this.#json('POST', `/api/ingest/eval-run/${encodeURIComponent(evalRunId)}/result`, body)
  }

  /** Finalizes the run and returns its rollup with the verdict; repeating it returns the same body. */
  async finalizeEvalRun(evalRunId: string): Promise<FinalizedEvalRun> {
    return withDoubleSummary(await this.#json<FinalizedEvalRun>('POST', `/api/ingest/eval-run/${encodeURIComponent(evalRunId)}/finalize`, {}))
  }

  /** One eval run with its result rows in baseline order. */
  async getEvalRun(evalRunId: string): Promise<EvalRun> {
    return withDoubleSummary(await this.#json<EvalRun>('GET', `/api/eval-runs/${encodeURIComponent(evalRunId)}`))
  }

  /** One page of this client's eval runs, newest first. */
  async listEvalRuns(query: ListEvalRunsRequest = {}): Promise<EvalRunPage> {
    const page = await this.#json<EvalRunPage>('GET', `/api/eval-runs${queryString(query)}`)
    return { ...page, items: page.items.map(withDoubleSummary) }
  }

  async #json<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, extra: Record<string, string> = {}, onReplayed?: () => void): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json', ...extra }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const response = await this.#send(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : jsonText(body) }, `${method} ${path}`)
    const text = await response.text()
    let parsed: unknown
    try {
      // Integers beyond 2^53 (a seed) come back as bigint, every digit kept.
      parsed = text ? parseJson(text, 'unsafe') : undefined
    } catch {
      parsed = undefined
    }
    if (response.status === 204) return undefined as T
    // Every answer of the API is a JSON object, an error one `{ "error": ... }`: anything else came from
    // another server (a base URL naming something else, a proxy's 502 page), not from episodic.
    const error = (parsed as { error?: unknown } | undefined)?.error
    if (parsed === null || typeof parsed !== 'object' || (!response.ok && typeof error !== 'string')) {
      const what = text.trim() === '' ? 'an empty body' : (response.headers.get('content-type') ?? 'no content type')
      throw new TransportError(
        `${method} ${path}: HTTP ${response.status} with ${what}, not an answer of episodic: is ${this.baseUrl} the service, and is it up?`,
      )
    }
    if (response.ok) {
      if (response.headers.get('idempotency-replayed') === 'true') onReplayed?.()
      return parsed as T
    }
    throw httpError(response.status, `${method} ${path}: ${error}`, response.headers.get('retry-after'))
  }

  async #send(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      return await this.#fetch(url, init)
    } catch (error) {
      if (init.signal?.aborted) throw error
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      throw new TransportError(`${what}: network failure talking to ${new URL(url).origin} (${cause?.code ?? cause?.message ?? (error as Error).message})`, {
        cause: error,
      })
    }
  }
}

/**
 * A rollup is computed from doubles: a whole value past 2^53 (a reward of
 * 1e16) that the exact parser read as a bigint is a number again, so the
 * summary is what its type says. Seeds and metadata elsewhere stay exact.
 */
function withDoubleSummary<T extends { summary?: unknown }>(run: T): T {
  return run.summary == null ? run : { ...run, summary: asDoubles(run.summary) }
}

function asDoubles(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  if (Array.isArray(value)) return value.map(asDoubles)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asDoubles(item)]))
}

/** `Retry-After` as seconds: delay-seconds, or an HTTP date from now (RFC 9110); undefined when neither. */
function retryAfterSeconds(value: string, now = Date.now()): number | undefined {
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text)
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

function httpError(status: number, message: string, retryAfter: string | null = null): Error {
  if (status === 401) return new AuthError(message)
  if (status === 403) return new AuthError(message, 403)
  if (status === 404) return new NotFoundError(message)
  if (status === 409) return new ConflictError(message)
  if (status === 400 || status === 413 || status === 415 || status === 422) return new ValidationError(message, status)
  // A 429 is the service asking to slow down: a ServerError, with how long to wait when it says.
  const seconds = retryAfter === null ? undefined : retryAfterSeconds(retryAfter)
  return new ServerError(message, status, seconds)
}

function idempotencyHeader(options: CreateOptions): Record<string, string> {
  return options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }
}

/** A `SignedPutResult` from object storage's status, `ETag` and body (an S3 error document on failure). */
export function storageAnswer(status: number, etag: string | null, text: string): SignedPutResult {
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? null
  return { status, etag, code, message: status >= 200 && status < 300 ? '' : s3Message(text) }
}

function s3Message(xml: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(xml)?.[1]
  return code ? `${code}${message ? `: ${message}` : ''}` : xml.slice(0, 200)
}

function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value))
  const text = params.toString()
  return text ? `?${text}` : ''
}
