/**
 * The valibot schemas of every wire body, as `schemas` from `episodic`: the
 * same objects the handlers validate with and the OpenAPI document is
 * generated from. Each is typed by the interfaces exported beside
 * `createApp` (`OpenEpisodeInput`, `Episode`, `MetricBlob`, ...).
 *
 * @example
 * import * as v from 'valibot'
 * import { schemas } from 'episodic'
 * const body = v.parse(schemas.OpenEpisodeBody, JSON.parse(text))
 *
 * @module
 */
export {
  ArtifactKindSchema,
  EpisodeRecord,
  EpisodeSourceSchema,
  FinalizeEpisodeBody,
  FinalizeEpisodeResponse,
  OpenEpisodeBody,
  OpenEpisodeResponse,
  UploadUrl,
} from './episodes/ingest-schemas.ts'
export { EpisodeList, EpisodeStatusSchema, ListEpisodesQuery } from './episodes/schemas.ts'
export {
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
  ResultStatusSchema,
  RollupSummarySchema,
  UploadResultBody,
  UploadResultResponse,
} from './eval/schemas.ts'
export { MetricBlobSchema } from './eval/metric-blob.ts'
