/**
 * Wire bodies of upload recovery (contract, "Upload recovery"): fresh URLs,
 * multipart uploads and the artifact check. They validate requests, type the
 * client library and generate the OpenAPI document.
 */
import * as v from 'valibot'
import { distinct, wireCount } from '../http/fields.ts'
import { typed } from '../http/typed-schema.ts'
import { MAX_OBJECT_SIZE, MAX_PART_SIZE, MAX_PARTS, MIN_PART_SIZE } from '../storage/multipart-rules.ts'
import type { ArtifactKind } from '../storage/types.ts'
import { ArtifactKindSchema, UploadUrl, type UploadUrlEntry } from './ingest-schemas.ts'

const kinds = v.pipe(
  v.array(ArtifactKindSchema, 'must be an array of artifact kinds'),
  distinct<ArtifactKind>('must not repeat a kind'),
)

/** Body of `POST .../upload-urls`. */
export interface UploadUrlsInput {
  /** Default: the kinds requested at open. A kind not requested before is added. */
  kinds?: ArtifactKind[]
}

export const UploadUrlsBody: v.GenericSchema<UploadUrlsInput> = typed<UploadUrlsInput>()(v.strictObject({ kinds: v.optional(kinds) }, 'must be a JSON object'))

/** `200` answer of `POST .../upload-urls`. */
export interface UploadUrlsResult {
  /** The episode the URLs are for. */
  episode_id: string
  /** One fresh signed PUT URL per kind. */
  upload_urls: UploadUrlEntry[]
}

export const UploadUrlsResponse: v.GenericSchema<UploadUrlsResult> = typed<UploadUrlsResult>()(
  v.object({ episode_id: v.string(), upload_urls: v.array(UploadUrl) }),
)

/** A byte count from 0 to `max`; one message for every way to miss it (an integer past 2^53 arrives as a bigint). */
const wholeBytes = (max: number, what: string) => {
  const rule = `must be a whole number of bytes from 0 to ${max} (${what})`
  return v.pipe(v.number(rule), v.integer(rule), v.minValue(0, rule), v.maxValue(max, rule))
}

/** Body of `POST .../multipart`. */
export interface CreateMultipartInput {
  /** The artifact to upload in parts. */
  kind: ArtifactKind
  /** The artifact's size in bytes, at most 5 TiB. */
  size: number
  /** Bytes per part (the last may be smaller): 5 MiB .. 5 GiB, at most 10,000 parts; default 64 MiB, or the fewest whole MiB within 10,000 parts past 625 GiB. */
  part_size?: number
}

export const CreateMultipartBody: v.GenericSchema<CreateMultipartInput> = typed<CreateMultipartInput>()(v.strictObject(
  {
    kind: ArtifactKindSchema,
    size: wholeBytes(MAX_OBJECT_SIZE, '5 TiB'),
    part_size: v.optional(v.pipe(wholeBytes(MAX_PART_SIZE, '5 GiB'), v.minValue(MIN_PART_SIZE, `must be at least ${MIN_PART_SIZE} (5 MiB)`))),
  },
  'must be a JSON object',
))

/** A presigned PUT of one part. */
export interface PartUrl {
  /** 1-based part number. */
  part_number: number
  /** Presigned PUT URL of this part. */
  url: string
}

const PartUrlSchema: v.GenericSchema<PartUrl> = typed<PartUrl>()(v.object({ part_number: wireCount, url: v.string() }))

/** `201` answer of `POST .../multipart`. */
export interface CreateMultipartResult {
  /** The episode the upload belongs to. */
  episode_id: string
  /** The artifact being uploaded. */
  kind: ArtifactKind
  /** Pass to resume, complete or abort. */
  upload_id: string
  /** Bytes per part (the last may be smaller). */
  part_size: number
  /** Number of parts, at most 10,000. */
  part_count: number
  /** One presigned PUT URL per part, ascending. */
  parts: PartUrl[]
  /** When the part URLs stop working (ISO 8601 UTC); `resumeMultipart` mints fresh ones. */
  expires_at: string
}

export const CreateMultipartResponse: v.GenericSchema<CreateMultipartResult> = typed<CreateMultipartResult>()(v.object({
  episode_id: v.string(),
  kind: ArtifactKindSchema,
  upload_id: v.string(),
  part_size: wireCount,
  part_count: wireCount,
  parts: v.array(PartUrlSchema),
  expires_at: v.string(),
}))

/** A part the store already holds. */
export interface UploadedPart {
  /** 1-based part number. */
  part_number: number
  /** Bytes stored. */
  size: number
  /** ETag to pass to complete. */
  etag: string
}

/** `200` answer of `GET .../multipart/{upload_id}`: what is stored, and fresh URLs for the rest. */
export interface ResumeMultipartResult {
  /** The upload resumed. */
  upload_id: string
  /** The artifact being uploaded. */
  kind: ArtifactKind
  /** Bytes per part (the last may be smaller). */
  part_size: number
  /** Number of parts. */
  part_count: number
  /** Parts the store already holds. */
  uploaded: UploadedPart[]
  /** Fresh presigned PUT URLs for the parts not yet stored. */
  parts: PartUrl[]
  /** When these URLs stop working (ISO 8601 UTC). */
  expires_at: string
}

export const ResumeMultipartResponse: v.GenericSchema<ResumeMultipartResult> = typed<ResumeMultipartResult>()(v.object({
  upload_id: v.string(),
  kind: ArtifactKindSchema,
  part_size: wireCount,
  part_count: wireCount,
  uploaded: v.array(v.object({ part_number: wireCount, size: wireCount, etag: v.string() })),
  parts: v.array(PartUrlSchema),
  expires_at: v.string(),
}))

/** Body of `POST .../multipart/{upload_id}/complete`. */
export interface CompleteMultipartInput {
  /** Ascending by part number, each with the ETag its PUT answered. */
  parts: { part_number: number; etag: string }[]
}

export const CompleteMultipartBody: v.GenericSchema<CompleteMultipartInput> = typed<CompleteMultipartInput>()(v.strictObject(
  {
    parts: v.pipe(
      v.array(
        v.strictObject({
          part_number: v.pipe(
            v.number('must be a number'),
            v.integer('must be an integer'),
            v.minValue(1, 'must be at least 1'),
            v.maxValue(MAX_PARTS, `must be at most ${MAX_PARTS}`),
          ),
          etag: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters')),
        }, 'must be an object { part_number, etag }'),
        'must be an array of parts',
      ),
      v.minLength(1, 'must name at least one part'),
      v.maxLength(MAX_PARTS, `must name at most ${MAX_PARTS} parts`),
    ),
  },
  'must be a JSON object',
))

/** `200` answer of complete. */
export interface CompleteMultipartResult {
  /** The episode the artifact belongs to. */
  episode_id: string
  /** The assembled artifact. */
  kind: ArtifactKind
  /** Its size in bytes. */
  size: number
  /** The store's ETag of the assembled object. */
  etag: string
}

export const CompleteMultipartResponse: v.GenericSchema<CompleteMultipartResult> = typed<CompleteMultipartResult>()(v.object({
  episode_id: v.string(),
  kind: ArtifactKindSchema,
  size: wireCount,
  etag: v.string(),
}))

/** One artifact as `GET /api/episodes/{id}/artifacts` reports it (a HEAD on the store). */
export interface ArtifactState {
  /** Which artifact. */
  kind: ArtifactKind
  /** Upload URLs were handed out for it. */
  requested: boolean
  /** The store holds the object. */
  present: boolean
  /** Bytes stored; `null` when absent. */
  size: number | null
  /** The store's ETag; `null` when absent. */
  etag: string | null
  /** Stored Content-Type; `null` when absent or not reported. */
  content_type: string | null
}

/** `200` answer of `GET /api/episodes/{id}/artifacts`. */
export interface ArtifactsResult {
  /** The episode checked. */
  episode_id: string
  /** Every artifact kind, the requested ones first. */
  artifacts: ArtifactState[]
}

export const ArtifactsResponse: v.GenericSchema<ArtifactsResult> = typed<ArtifactsResult>()(v.object({
  episode_id: v.string(),
  artifacts: v.array(v.object({
    kind: ArtifactKindSchema,
    requested: v.boolean(),
    present: v.boolean(),
    size: v.nullable(wireCount),
    etag: v.nullable(v.string()),
    content_type: v.nullable(v.string()),
  })),
}))
