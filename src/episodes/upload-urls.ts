/**
 * What the upload-recovery routes share: the episode they act on (the
 * caller's, `recording` or `failed`), recording newly requested kinds, and
 * minting upload URLs exactly as open does.
 */
import { type Kysely, sql } from 'kysely'
import type { Deps } from '../context.ts'
import type { Database } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import { uuidParam } from '../http/fields.ts'
import { ARTIFACT_CONTENT_TYPE, type ArtifactKind, objectKey, type ObjectStorage, StorageError, UPLOAD_URL_SECONDS } from '../storage/types.ts'
import type { Episode, UploadUrlEntry } from './ingest-schemas.ts'
import { findEpisode } from './rows.ts'

/** The caller's episode that may still take uploads; 404 (unknown, foreign, malformed) or 409 (`ready`, `archived`). */
export async function uploadableEpisode(db: Kysely<Database>, clientId: string, rawId: string | undefined): Promise<Episode> {
  const episode = await findEpisode(db, clientId, uuidParam(rawId, 'episode not found'))
  if (!episode) throw new EpisodicError('not_found', 'episode not found')
  if (episode.status !== 'recording' && episode.status !== 'failed') {
    throw new EpisodicError('conflict', `episode is ${episode.status}; uploads are accepted only while it is recording or failed`)
  }
  return episode
}

/** Adds kinds to the episode's requested artifacts (one statement per kind, so concurrent adds never lose one). */
export async function addRequestedKinds(db: Kysely<Database>, episode: Episode, kinds: readonly ArtifactKind[]): Promise<void> {
  for (const kind of kinds) {
    if (episode.artifacts.includes(kind)) continue
    await db
      .updateTable('episodes')
      .set({ artifacts: sql`case when ${kind}::text = any(artifacts) then artifacts else array_append(artifacts, ${kind}::text) end` })
      .where('id', '=', episode.episode_id)
      .where('client_id', '=', episode.client_id)
      .execute()
  }
}

/** The object storage, or 409 when the deployment runs without one. */
export function requireStorage(deps: Pick<Deps, 'storage'>): ObjectStorage {
  if (!deps.storage) throw new EpisodicError('conflict', 'this deployment has no object storage (EPISODIC_STORAGE=none)')
  return deps.storage
}

/** Signed PUT URLs for `kinds`, as open mints them (30 minutes, the kind's Content-Type signed). */
export function mintUploadUrls(
  storage: ObjectStorage,
  clientId: string,
  episodeId: string,
  kinds: readonly ArtifactKind[],
  origin: string,
  now: Date,
): Promise<UploadUrlEntry[]> {
  return Promise.all(
    kinds.map(async (kind) => {
      const key = objectKey(clientId, episodeId, kind)
      const signed = await storage.presignPut({ key, contentType: ARTIFACT_CONTENT_TYPE[kind], now, expiresInSeconds: UPLOAD_URL_SECONDS, origin })
      return { kind, url: signed.url, expires_at: signed.expiresAt.toISOString(), public_url: storage.publicUrl(key) }
    }),
  )
}

/** The 404 of a multipart call whose upload does not exist (never created, aborted or completed), named as S3 names it. */
export const NO_SUCH_UPLOAD = 'NoSuchUpload: upload not found (never created, aborted or completed)'

/** S3 codes that mean the caller's completion list was wrong (400 with S3's code in the message). */
const CALLER_CODES = new Set(['InvalidPart', 'InvalidPartOrder', 'EntityTooSmall', 'EntityTooLarge', 'MalformedXML', 'InvalidArgument'])

/** A store's S3 error as the API answers it: the caller's mistakes 400/404, the rest 500. */
export function fromStorageError(error: unknown): unknown {
  if (!(error instanceof StorageError)) return error
  if (error.code === 'NoSuchUpload') return new EpisodicError('not_found', NO_SUCH_UPLOAD)
  if (error.code === 'OperationAborted') return new EpisodicError('conflict', error.message)
  if (error.code === 'QuotaExceeded') return new EpisodicError('conflict', `QuotaExceeded: ${error.message}`)
  if (CALLER_CODES.has(error.code)) return new EpisodicError('invalid', error.message.includes(error.code) ? error.message : `${error.code}: ${error.message}`)
  return new EpisodicError('internal', 'object storage failed', { cause: error })
}
