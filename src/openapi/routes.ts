/**
 * Every route the app serves, with the valibot schemas that validate it. The
 * OpenAPI document is generated from this table, and a test checks that the
 * table and the app's real routes agree.
 */
import * as v from 'valibot'
import { EpisodeList, ListEpisodesQuery } from '../episodes/schemas.ts'
import {
  CreateEvalRunBody,
  CreateEvalRunResponse,
  EvalRunList,
  EvalRunWithResults,
  FinalizeEvalRunBody,
  FinalizeEvalRunResponse,
  ListEvalRunsQuery,
  UploadResultBody,
  UploadResultResponse,
} from '../eval/schemas.ts'
import {
  EpisodeRecord,
  FinalizeEpisodeBody,
  FinalizeEpisodeResponse,
  OpenEpisodeBody,
  OpenEpisodeResponse,
} from '../ingest/schemas.ts'

export interface RouteDoc {
  method: 'get' | 'post' | 'put'
  /** OpenAPI-style path (`{id}` parameters). */
  path: string
  summary: string
  tag: string
  /** `apiKey`: Bearer or X-Service-Key; `presigned`: SigV4 query signature; `none`. */
  auth: 'apiKey' | 'presigned' | 'none'
  body?: v.GenericSchema
  query?: v.GenericSchema
  /** Success status and body schema (undefined body: not JSON). */
  success: { status: number; schema?: v.GenericSchema; description?: string }
  /** Error statuses this route can answer besides 500. */
  errors: number[]
}

const ArtifactUrl = v.object({ episode_id: v.string(), kind: v.picklist(['video', 'sensors', 'actions']), url: v.string(), expires_at: v.string() })

export const ROUTES: RouteDoc[] = [
  { method: 'post', path: '/api/ingest/episode', tag: 'ingest', summary: 'Open an episode and get one signed upload URL per requested artifact', auth: 'apiKey', body: OpenEpisodeBody, success: { status: 201, schema: OpenEpisodeResponse }, errors: [400, 401, 413] },
  { method: 'post', path: '/api/ingest/episode/{episode_id}/finalize', tag: 'ingest', summary: 'Finalize an episode as ready or failed, with roll-ups and a per-key metadata merge', auth: 'apiKey', body: FinalizeEpisodeBody, success: { status: 200, schema: FinalizeEpisodeResponse }, errors: [400, 401, 404, 409, 413] },
  { method: 'get', path: '/api/episodes', tag: 'episodes', summary: 'List episodes, newest first', auth: 'apiKey', query: ListEpisodesQuery, success: { status: 200, schema: EpisodeList }, errors: [400, 401] },
  { method: 'get', path: '/api/episodes/{episode_id}', tag: 'episodes', summary: 'The full episode record', auth: 'apiKey', success: { status: 200, schema: EpisodeRecord }, errors: [401, 404] },
  { method: 'get', path: '/api/episodes/{episode_id}/artifact/{kind}', tag: 'episodes', summary: 'A fresh signed GET URL for an artifact (302 to it with ?redirect=1)', auth: 'apiKey', query: v.object({ redirect: v.optional(v.literal('1')) }), success: { status: 200, schema: ArtifactUrl }, errors: [302, 401, 404] },
  { method: 'post', path: '/api/ingest/eval-run', tag: 'eval', summary: 'Create an eval run with one pending result per baseline episode', auth: 'apiKey', body: CreateEvalRunBody, success: { status: 201, schema: CreateEvalRunResponse }, errors: [400, 401, 404, 413] },
  { method: 'post', path: '/api/ingest/eval-run/{eval_run_id}/result', tag: 'eval', summary: "Upload one baseline episode's result and metric blob (a retry replaces it)", auth: 'apiKey', body: UploadResultBody, success: { status: 200, schema: UploadResultResponse }, errors: [400, 401, 404, 409, 413] },
  { method: 'post', path: '/api/ingest/eval-run/{eval_run_id}/finalize', tag: 'eval', summary: 'Close the run and compute the rollup (idempotent)', auth: 'apiKey', body: FinalizeEvalRunBody, success: { status: 200, schema: FinalizeEvalRunResponse }, errors: [400, 401, 404] },
  { method: 'get', path: '/api/eval-runs', tag: 'eval', summary: 'List eval runs, newest first', auth: 'apiKey', query: ListEvalRunsQuery, success: { status: 200, schema: EvalRunList }, errors: [400, 401] },
  { method: 'get', path: '/api/eval-runs/{eval_run_id}', tag: 'eval', summary: 'An eval run with its result rows', auth: 'apiKey', success: { status: 200, schema: EvalRunWithResults }, errors: [401, 404] },
  { method: 'put', path: '/storage/{key}', tag: 'storage', summary: 'Built-in object store: upload through a signed URL (S3-style answers)', auth: 'presigned', success: { status: 200, description: 'stored; ETag header' }, errors: [403, 404] },
  { method: 'get', path: '/storage/{key}', tag: 'storage', summary: 'Built-in object store: read through a signed URL', auth: 'presigned', success: { status: 200, description: 'the object bytes' }, errors: [403, 404] },
  { method: 'get', path: '/healthz', tag: 'meta', summary: 'Liveness', auth: 'none', success: { status: 200, schema: v.object({ ok: v.boolean() }) }, errors: [] },
  { method: 'get', path: '/openapi.json', tag: 'meta', summary: 'This document', auth: 'none', success: { status: 200, description: 'OpenAPI 3.1 document' }, errors: [] },
]
