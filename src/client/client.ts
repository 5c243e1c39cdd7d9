/**
 * A typed client for every endpoint of the service. Request and response
 * types come from the server's own valibot schemas, so the two cannot drift.
 * HTTP failures become the library's error classes (401 AuthError, 404
 * NotFoundError, 400/413 ValidationError, 409 ConflictError, 5xx ServerError,
 * network failures TransportError).
 *
 * @example
 * const client = await EpisodicClient.connect()            // env or credentials file
 * const opened = await client.openEpisode({ robot: 'arm-1', request_uploads: ['actions'] })
 * await client.upload(opened.upload_urls[0], bytes)
 * await client.finalizeEpisode(opened.episode_id, { duration_s: 12.5 })
 */
import type * as v from 'valibot'
import type { EpisodeList, ListEpisodesQuery } from '../episodes/schemas.ts'
import type {
  CreateEvalRunBody,
  CreateEvalRunResponse,
  EvalRunList,
  EvalRunWithResults,
  FinalizeEvalRunResponse,
  ListEvalRunsQuery,
  UploadResultBody,
  UploadResultResponse,
} from '../eval/schemas.ts'
import type {
  EpisodeRecord,
  FinalizeEpisodeBody,
  FinalizeEpisodeResponse,
  OpenEpisodeBody,
  OpenEpisodeResponse,
  UploadUrl,
} from '../ingest/schemas.ts'
import type { ArtifactKind } from '../storage/types.ts'
import { resolveClientConfig, type ClientOptions } from './config.ts'
import { AuthError, ConflictError, NotFoundError, ServerError, TransportError, ValidationError } from './errors.ts'

export type OpenEpisodeRequest = v.InferInput<typeof OpenEpisodeBody>
export type OpenEpisodeResult = v.InferOutput<typeof OpenEpisodeResponse>
export type FinalizeEpisodeRequest = v.InferInput<typeof FinalizeEpisodeBody>
export type FinalizeEpisodeResult = v.InferOutput<typeof FinalizeEpisodeResponse>
export type Episode = v.InferOutput<typeof EpisodeRecord>
export type EpisodePage = v.InferOutput<typeof EpisodeList>
export type ListEpisodesRequest = Partial<Record<keyof v.InferInput<typeof ListEpisodesQuery>, string | number>>
export type UploadUrlEntry = v.InferOutput<typeof UploadUrl>
export type CreateEvalRunRequest = v.InferInput<typeof CreateEvalRunBody>
export type CreatedEvalRun = v.InferOutput<typeof CreateEvalRunResponse>
export type UploadResultRequest = v.InferInput<typeof UploadResultBody>
export type UploadResultResult = v.InferOutput<typeof UploadResultResponse>
export type FinalizedEvalRun = v.InferOutput<typeof FinalizeEvalRunResponse>
export type EvalRun = v.InferOutput<typeof EvalRunWithResults>
export type EvalRunPage = v.InferOutput<typeof EvalRunList>
export interface ArtifactAccess {
  episode_id: string
  kind: ArtifactKind
  url: string
  expires_at: string
}

/** The client for one API key and base URL. */
export class EpisodicClient {
  readonly baseUrl: string
  readonly #apiKey: string
  readonly #fetch: typeof fetch

  constructor(config: { apiKey: string; baseUrl: string; fetch?: typeof fetch }) {
    this.baseUrl = config.baseUrl.replace(/\/+$/, '')
    this.#apiKey = config.apiKey
    this.#fetch = config.fetch ?? globalThis.fetch.bind(globalThis)
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

  openEpisode(body: OpenEpisodeRequest = {}): Promise<OpenEpisodeResult> {
    return this.#json('POST', '/api/ingest/episode', body)
  }

  finalizeEpisode(episodeId: string, body: FinalizeEpisodeRequest = {}): Promise<FinalizeEpisodeResult> {
    return this.#json('POST', `/api/ingest/episode/${encodeURIComponent(episodeId)}/finalize`, body)
  }

  getEpisode(episodeId: string): Promise<Episode> {
    return this.#json('GET', `/api/episodes/${encodeURIComponent(episodeId)}`)
  }

  listEpisodes(query: ListEpisodesRequest = {}): Promise<EpisodePage> {
    return this.#json('GET', `/api/episodes${queryString(query)}`)
  }

  /**
   * PUTs an artifact to its signed URL (object storage, not the service): the
   * kind's Content-Type, no Authorization header, no retry (retrying is the
   * caller's decision). Streams when given a ReadableStream.
   */
  async upload(entry: Pick<UploadUrlEntry, 'kind' | 'url'>, body: Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | string): Promise<{ etag: string | null }> {
    const contentType = entry.kind === 'video' ? 'video/mp4' : 'application/octet-stream'
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

  /** Downloads an artifact's bytes through a fresh signed URL. */
  async downloadArtifact(episodeId: string, kind: ArtifactKind): Promise<Uint8Array> {
    const { url } = await this.artifactUrl(episodeId, kind)
    const response = await this.#send(url, { method: 'GET' }, `download of ${kind} of episode ${episodeId}`)
    if (!response.ok) {
      const text = await response.text()
      if (response.status === 404) throw new NotFoundError(`episode ${episodeId} has no uploaded ${kind} artifact`)
      throw httpError(response.status, `download of ${kind} of episode ${episodeId} failed (${response.status}): ${s3Message(text)}`)
    }
    try {
      return new Uint8Array(await response.arrayBuffer())
    } catch (error) {
      throw new TransportError(`download of ${kind} of episode ${episodeId} was cut off: ${(error as Error).message}`, { cause: error })
    }
  }

  createEvalRun(body: CreateEvalRunRequest): Promise<CreatedEvalRun> {
    return this.#json('POST', '/api/ingest/eval-run', body)
  }

  uploadResult(evalRunId: string, body: UploadResultRequest): Promise<UploadResultResult> {
    return this.#json('POST', `/api/ingest/eval-run/${encodeURIComponent(evalRunId)}/result`, body)
  }

  finalizeEvalRun(evalRunId: string): Promise<FinalizedEvalRun> {
    return this.#json('POST', `/api/ingest/eval-run/${encodeURIComponent(evalRunId)}/finalize`, {})
  }

  getEvalRun(evalRunId: string): Promise<EvalRun> {
    return this.#json('GET', `/api/eval-runs/${encodeURIComponent(evalRunId)}`)
  }

  listEvalRuns(query: { limit?: number; cursor?: string; status?: 'pending' | 'completed' } = {}): Promise<EvalRunPage> {
    return this.#json('GET', `/api/eval-runs${queryString(query)}`)
  }

  async #json<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const response = await this.#send(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }, `${method} ${path}`)
    const text = await response.text()
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    if (response.ok) return parsed as T
    const message = (parsed as { error?: string } | undefined)?.error ?? (text.slice(0, 200) || response.statusText)
    throw httpError(response.status, `${method} ${path}: ${message}`)
  }

  async #send(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      return await this.#fetch(url, init)
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      throw new TransportError(`${what}: network failure talking to ${new URL(url).origin} (${cause?.code ?? cause?.message ?? (error as Error).message})`, { cause: error })
    }
  }
}

function httpError(status: number, message: string): Error {
  if (status === 401) return new AuthError(message)
  if (status === 403) return new AuthError(message, 403)
  if (status === 404) return new NotFoundError(message)
  if (status === 409) return new ConflictError(message)
  if (status === 400 || status === 413) return new ValidationError(message, status)
  return new ServerError(message, status)
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
