/**
 * Every route the app serves, with the valibot schemas that validate it. The
 * OpenAPI document is generated from this table, and a test checks that the
 * table and the app's real routes agree.
 */
import * as v from 'valibot'
import { ArtifactAccessResponse, ArtifactUrlQuery, EpisodeList, ListEpisodesQuery } from '../episodes/schemas.ts'
import {
  CreateEvalRunBody,
  CreateEvalRunResponse,
  EvalResultRow,
  EvalRunList,
  EvalRunRecord,
  EvalRunWithResults,
  FinalizeEvalRunBody,
  FinalizeEvalRunResponse,
  ListEvalRunsQuery,
  MetricSummarySchema,
  RollupSummarySchema,
  UploadResultBody,
  UploadResultResponse,
} from '../eval/schemas.ts'
import {
  EpisodeRecord,
  FinalizeEpisodeBody,
  FinalizeEpisodeResponse,
  IDEMPOTENCY_KEY_SYNTAX,
  OpenEpisodeBody,
  OpenEpisodeResponse,
  UploadUrl,
} from '../episodes/ingest-schemas.ts'
import {
  ArtifactsResponse,
  CompleteMultipartBody,
  CompleteMultipartResponse,
  CreateMultipartBody,
  CreateMultipartResponse,
  ResumeMultipartResponse,
  UploadUrlsBody,
  UploadUrlsResponse,
} from '../episodes/upload-schemas.ts'

export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete'
  /** OpenAPI-style path (`{id}` parameters). */
  path: string
  summary: string
  /** Longer prose shown under the summary. */
  description?: string
  tag: string
  /** `apiKey`: Bearer or X-Service-Key; `presigned`: SigV4 query signature; `none`. */
  auth: 'apiKey' | 'presigned' | 'none'
  body?: v.GenericSchema
  query?: v.GenericSchema
  /** Success status and body schema (undefined body: not JSON). */
  success: { status: number; schema?: v.GenericSchema; description?: string }
  /** Other statuses this route can answer besides 500 (413 is added wherever there is a body); mostly errors. */
  errors: number[]
  /** An example request body, from the spec. */
  example?: Record<string, unknown>
  /** Optional request headers the route reads (e.g. `Idempotency-Key`). */
  headers?: Array<{ name: string; description: string; schema: Record<string, unknown> }>
}

/**
 * Shared response shapes, emitted once under `components.schemas` and
 * referenced with `$ref` wherever they appear, so generated clients get
 * named types (`components['schemas']['Episode']`).
 */
export const COMPONENTS: Record<string, v.GenericSchema> = {
  Episode: EpisodeRecord,
  UploadUrl,
  EvalRun: EvalRunRecord,
  EvalResult: EvalResultRow,
  EvalRunWithResults,
  RollupSummary: RollupSummarySchema,
  MetricSummary: MetricSummarySchema,
}

/** Descriptions of path and query parameters, by name. */
export const PARAMETER_DOCS: Record<string, string> = {
  episode_id: 'Episode id (UUID) returned by open',
  eval_run_id: 'Eval run id (UUID) returned by create',
  kind: 'Artifact kind: video, sensors or actions',
  upload_id: 'Multipart upload id returned by create',
  key: 'Object key `<client_id>/<episode_id>/<file>`',
  limit: 'Page size, 1 to 200 (default 50)',
  cursor: '`next_cursor` of the previous page',
  source: 'Only episodes of this source',
  status: 'Only items in this status',
  policy_version: 'Only episodes recorded with this policy version',
  robot: 'Only episodes of this robot',
  redirect: 'With 1 (or true), answer 302 to the signed URL instead of JSON',
  candidate_policy_version: 'Only eval runs of this candidate policy version',
  baseline_policy_version: 'Only eval runs against this baseline policy version',
  baselines_of: 'An eval run id: only eval runs over exactly the same set of baseline episodes (its lineage); not a baseline episode id',
  created_after: 'Only items created at or after this ISO 8601 date or date-time (inclusive)',
  created_before: 'Only items created before this ISO 8601 date or date-time (exclusive)',
}

const OPEN_EXAMPLE = {
  name: 'pick-and-place-001',
  source: 'real',
  robot: 'ur5e-lab-2',
  policy_version: 'pick-v3',
  env_version: 'lab-2',
  seed: 42,
  fps: 30,
  metadata: { task: 'pick', operator: 'ana' },
  request_uploads: ['video', 'sensors', 'actions'],
}
const FINALIZE_EXAMPLE = { status: 'ready', duration_s: 42.5, bytes_total: 104857600, metadata: { success: true, reward_total: 1 } }
const CREATE_RUN_EXAMPLE = {
  candidate_policy_version: 'pick-v4',
  baseline_policy_version: 'pick-v3',
  baseline_episode_ids: ['0b5e7c1a-2f4d-4c3e-9a8b-1d2e3f4a5b6c'],
  name: 'pick-v4 vs pick-v3',
  metadata: { checkpoint_sha256: '9f2c…', build: 'https://ci.example.com/builds/812' },
}

const IDEMPOTENCY = [{
  name: 'Idempotency-Key',
  description:
    '1..255 printable ASCII characters, kept per client for 24 h: a retry with the same key and body gets the first answer (Idempotency-Replayed: true); another body 422; while the first still runs 409',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_SYNTAX.source },
}]

export const ROUTES: RouteDoc[] = [
  {
    method: 'post',
    path: '/api/ingest/episode',
    tag: 'ingest',
    summary: 'Open an episode and get one signed upload URL per requested artifact (Idempotency-Key header: a retry gets the first answer)',
    auth: 'apiKey',
    body: OpenEpisodeBody,
    example: OPEN_EXAMPLE,
    success: { status: 201, schema: OpenEpisodeResponse },
    errors: [400, 401, 409, 413, 415, 422, 429],
    headers: IDEMPOTENCY,
  },
  {
    method: 'post',
    path: '/api/ingest/episode/{episode_id}/upload-urls',
    tag: 'uploads',
    summary: 'Fresh signed upload URLs for a recording or failed episode (a new kind is added to its requested artifacts)',
    auth: 'apiKey',
    body: UploadUrlsBody,
    success: { status: 200, schema: UploadUrlsResponse },
    errors: [400, 401, 404, 409, 413, 415, 429],
  },
  {
    method: 'post',
    path: '/api/ingest/episode/{episode_id}/multipart',
    tag: 'uploads',
    summary: 'Start a multipart upload of one artifact (up to 5 TiB): one presigned PUT URL per part',
    auth: 'apiKey',
    body: CreateMultipartBody,
    success: { status: 201, schema: CreateMultipartResponse },
    errors: [400, 401, 404, 409, 413, 415, 429],
  },
  {
    method: 'get',
    path: '/api/ingest/episode/{episode_id}/multipart/{upload_id}',
    tag: 'uploads',
    summary: 'Resume a multipart upload: the parts stored so far and fresh URLs for the others',
    auth: 'apiKey',
    success: { status: 200, schema: ResumeMultipartResponse },
    errors: [401, 404, 409, 429],
  },
  {
    method: 'post',
    path: '/api/ingest/episode/{episode_id}/multipart/{upload_id}/complete',
    tag: 'uploads',
    summary: "Complete a multipart upload (S3's rules: ascending parts, ETags as stored, 5 MiB parts but the last)",
    auth: 'apiKey',
    body: CompleteMultipartBody,
    success: { status: 200, schema: CompleteMultipartResponse },
    errors: [400, 401, 404, 409, 413, 415, 429],
  },
  {
    method: 'delete',
    path: '/api/ingest/episode/{episode_id}/multipart/{upload_id}',
    tag: 'uploads',
    summary: 'Abort a multipart upload and remove its parts',
    auth: 'apiKey',
    success: { status: 204, description: 'aborted' },
    errors: [401, 404, 409, 429],
  },
  {
    method: 'get',
    path: '/api/episodes/{episode_id}/artifacts',
    tag: 'episodes',
    summary: 'Which artifacts the store holds (a HEAD on each), with size, ETag and type',
    auth: 'apiKey',
    success: { status: 200, schema: ArtifactsResponse },
    errors: [401, 404, 429],
  },
  {
    method: 'post',
    path: '/api/ingest/episode/{episode_id}/finalize',
    tag: 'ingest',
    summary: 'Finalize an episode as ready or failed, with roll-ups and a per-key metadata merge',
    auth: 'apiKey',
    body: FinalizeEpisodeBody,
    example: FINALIZE_EXAMPLE,
    success: { status: 200, schema: FinalizeEpisodeResponse },
    errors: [400, 401, 404, 409, 413, 415, 429],
  },
  {
    method: 'get',
    path: '/api/episodes',
    tag: 'episodes',
    summary: 'List episodes, newest first',
    description:
      'Besides the parameters below, any number of `metadata.<key>[.<key>...]=<value>` parameters (up to 16) filter on JSON containment of the metadata: `metadata.task=reach`; a JSON number, `true`, `false` or `null` also matches that value (`metadata.seed=5` matches 5 and "5"), a double-quoted value only the string. See docs/portal.md.',
    auth: 'apiKey',
    query: ListEpisodesQuery,
    success: { status: 200, schema: EpisodeList },
    errors: [400, 401, 429],
  },
  {
    method: 'get',
    path: '/api/episodes/{episode_id}',
    tag: 'episodes',
    summary: 'The full episode record',
    auth: 'apiKey',
    success: { status: 200, schema: EpisodeRecord },
    errors: [401, 404, 429],
  },
  {
    method: 'get',
    path: '/api/episodes/{episode_id}/artifact/{kind}',
    tag: 'episodes',
    summary: 'A fresh signed GET URL for an artifact (302 to it with ?redirect=1)',
    auth: 'apiKey',
    query: ArtifactUrlQuery,
    success: { status: 200, schema: ArtifactAccessResponse },
    errors: [302, 401, 404, 429],
  },
  {
    method: 'post',
    path: '/api/ingest/eval-run',
    tag: 'eval',
    summary: 'Create an eval run with one pending result per baseline episode (Idempotency-Key header: a retry gets the first answer)',
    auth: 'apiKey',
    body: CreateEvalRunBody,
    example: CREATE_RUN_EXAMPLE,
    success: { status: 201, schema: CreateEvalRunResponse },
    errors: [400, 401, 404, 409, 413, 415, 422, 429],
    headers: IDEMPOTENCY,
  },
  {
    method: 'post',
    path: '/api/ingest/eval-run/{eval_run_id}/result',
    tag: 'eval',
    summary: "Upload one baseline episode's result and metric blob (a retry replaces it)",
    auth: 'apiKey',
    body: UploadResultBody,
    success: { status: 200, schema: UploadResultResponse },
    errors: [400, 401, 404, 409, 413, 415, 429],
  },
  {
    method: 'post',
    path: '/api/ingest/eval-run/{eval_run_id}/finalize',
    tag: 'eval',
    summary: 'Close the run and compute the rollup (idempotent)',
    auth: 'apiKey',
    body: FinalizeEvalRunBody,
    success: { status: 200, schema: FinalizeEvalRunResponse },
    errors: [400, 401, 404, 415, 429],
  },
  {
    method: 'get',
    path: '/api/eval-runs',
    tag: 'eval',
    summary: 'List eval runs, newest first',
    auth: 'apiKey',
    query: ListEvalRunsQuery,
    success: { status: 200, schema: EvalRunList },
    errors: [400, 401, 429],
  },
  {
    method: 'get',
    path: '/api/eval-runs/{eval_run_id}',
    tag: 'eval',
    summary: 'An eval run with its result rows',
    auth: 'apiKey',
    success: { status: 200, schema: EvalRunWithResults },
    errors: [401, 404, 429],
  },
  {
    method: 'put',
    path: '/storage/{key}',
    tag: 'storage',
    summary:
      'Built-in object store: upload an object, or one part with ?partNumber&uploadId, through a signed URL (S3-style answers: 400 EntityTooLarge over 5 GiB, 411 without a length)',
    auth: 'presigned',
    success: { status: 200, description: 'stored; ETag header' },
    errors: [400, 403, 404, 411],
  },
  {
    method: 'get',
    path: '/storage/{key}',
    tag: 'storage',
    summary:
      'Built-in object store: read through a signed URL (a Range header gets 206 with those bytes, or 416 outside the object; If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since as S3 answers them)',
    auth: 'presigned',
    success: { status: 200, description: 'the object bytes; ETag and Last-Modified headers' },
    // 206 and 304 are not errors, but listed here so they get their own entries beside 200.
    errors: [206, 304, 403, 404, 412, 416],
  },
  {
    method: 'get',
    path: '/healthz',
    tag: 'meta',
    summary: 'Liveness',
    auth: 'none',
    success: { status: 200, schema: v.object({ ok: v.boolean() }) },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'meta',
    summary: 'This document',
    auth: 'none',
    success: { status: 200, description: 'OpenAPI 3.1 document' },
    errors: [],
  },
]
