/**
 * Upload recovery (contract, "Upload recovery"), mounted at `/api`: fresh
 * upload URLs for an open episode, multipart uploads (create, resume,
 * complete, abort) for artifacts up to 5 TiB, and the artifact check.
 */
import { Hono } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { Context, MiddlewareHandler } from 'hono'
import { requireKey, requireKeyOrSession } from '../auth/middleware.ts'
import type { AppEnv, Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { readJsonBody } from '../http/body.ts'
import { uuidParam } from '../http/fields.ts'
import { defaultPartSize, MAX_PARTS, partCount } from '../storage/multipart-rules.ts'
import { expiryOf } from '../storage/sigv4.ts'
import { ARTIFACT_CONTENT_TYPE, type ArtifactKind, type MultipartStore, objectKey, UPLOAD_URL_SECONDS } from '../storage/types.ts'
import { artifactStates } from './artifacts.ts'
import { getEpisode } from './rows.ts'
import {
  type ArtifactsResult,
  CompleteMultipartBody,
  type CompleteMultipartResult,
  CreateMultipartBody,
  type CreateMultipartResult,
  type PartUrl,
  type ResumeMultipartResult,
  UploadUrlsBody,
  type UploadUrlsResult,
} from './upload-schemas.ts'
import { addRequestedKinds, fromStorageError, mintUploadUrls, NO_SUCH_UPLOAD, requireStorage, uploadableEpisode } from './upload-urls.ts'

export function uploadRoutes(deps: Deps) {
  const app = new Hono<AppEnv>()
  // The ingest and episode routers may have authenticated the request already.
  const unlessDone = (check: MiddlewareHandler<AppEnv>) => createMiddleware<AppEnv>((c, next) => (c.get('clientId') ? next() : check(c, next)))
  // The ingest routes take only a key (their GET mints upload URLs); the artifact check also a portal session.
  const auth = unlessDone(requireKey(deps))
  const read = unlessDone(requireKeyOrSession(deps))
  const originOf = (c: Context<AppEnv>) => deps.baseUrl ?? new URL(c.req.url).origin
  /** The episode (404/409 as for fresh URLs), the multipart upload the path names (404), its store and object key. */
  const openUpload = async (c: Context<AppEnv>) => {
    const clientId = c.get('clientId')
    const episode = await uploadableEpisode(deps.db, clientId, c.req.param('id'))
    const upload = await findUpload(deps, episode.episode_id, c.req.param('upload'))
    return { episode, upload, multipart: multipartOf(deps), key: objectKey(clientId, episode.episode_id, upload.kind) }
  }

  app.post('/ingest/episode/:id/upload-urls', auth, async (c) => {
    const clientId = c.get('clientId')
    const episode = await uploadableEpisode(deps.db, clientId, c.req.param('id'))
    const body = await readJsonBody(c.req.raw, UploadUrlsBody, deps.bodyLimit)
    const kinds = body.kinds ?? (episode.artifacts as ArtifactKind[])
    const storage = deps.storage
    if (!storage) return c.json({ episode_id: episode.episode_id, upload_urls: [] } satisfies UploadUrlsResult, 200)
    await addRequestedKinds(deps.db, episode, kinds)
    const uploadUrls = await mintUploadUrls(storage, clientId, episode.episode_id, kinds, originOf(c), deps.clock.now())
    return c.json({ episode_id: episode.episode_id, upload_urls: uploadUrls } satisfies UploadUrlsResult, 200)
  })

  app.post('/ingest/episode/:id/multipart', auth, async (c) => {
    const clientId = c.get('clientId')
    const episode = await uploadableEpisode(deps.db, clientId, c.req.param('id'))
    const body = await readJsonBody(c.req.raw, CreateMultipartBody, deps.bodyLimit)
    const multipart = multipartOf(deps)
    const partSize = body.part_size ?? defaultPartSize(body.size)
    const count = partCount(body.size, partSize)
    if (count > MAX_PARTS) {
      throw new EpisodicError(
        'invalid',
        `part_size: ${partSize} bytes would make ${count} parts of a ${body.size}-byte artifact; at most ${MAX_PARTS} are allowed (use at least ${
          Math.ceil(body.size / MAX_PARTS)
        })`,
      )
    }
    const key = objectKey(clientId, episode.episode_id, body.kind)
    const { uploadId } = await multipart.create(key, ARTIFACT_CONTENT_TYPE[body.kind], partSize).catch((error) => Promise.reject(fromStorageError(error)))
    const now = deps.clock.now()
    await deps.db
      .insertInto('multipart_uploads')
      .values({
        episode_id: episode.episode_id,
        upload_id: uploadId,
        kind: body.kind,
        size: body.size,
        part_size: partSize,
        part_count: count,
        created_at: now,
      })
      .execute()
    await addRequestedKinds(deps.db, episode, [body.kind])
    const numbers = Array.from({ length: count }, (_, i) => i + 1)
    const parts = await partUrls(multipart, key, uploadId, numbers, originOf(c), now)
    const result: CreateMultipartResult = {
      episode_id: episode.episode_id,
      kind: body.kind,
      upload_id: uploadId,
      part_size: partSize,
      part_count: count,
      parts,
      expires_at: expiry(now),
    }
    return c.json(result, 201)
  })

  app.get('/ingest/episode/:id/multipart/:upload', auth, async (c) => {
    const { upload, multipart, key } = await openUpload(c)
    const stored = await multipart.listParts(key, upload.uploadId).catch((error) => Promise.reject(fromStorageError(error)))
    const have = new Set(stored.map((part) => part.partNumber))
    const missing = Array.from({ length: upload.partCount }, (_, i) => i + 1).filter((n) => !have.has(n))
    const now = deps.clock.now()
    const result: ResumeMultipartResult = {
      upload_id: upload.uploadId,
      kind: upload.kind,
      part_size: upload.partSize,
      part_count: upload.partCount,
      uploaded: stored.map((part) => ({ part_number: part.partNumber, size: part.size, etag: part.etag })),
      parts: await partUrls(multipart, key, upload.uploadId, missing, originOf(c), now),
      expires_at: expiry(now),
    }
    return c.json(result, 200)
  })

  app.post('/ingest/episode/:id/multipart/:upload/complete', auth, async (c) => {
    const { episode, upload, multipart, key } = await openUpload(c)
    const body = await readJsonBody(c.req.raw, CompleteMultipartBody, deps.bodyLimit)
    const parts = body.parts.map((part) => ({ partNumber: part.part_number, etag: part.etag }))
    // Checked here first, so every store answers a misordered list alike
    // (Ceph's gateway would report a small part before the order).
    if (parts.some((part, i) => i > 0 && part.partNumber <= parts[i - 1]!.partNumber)) {
      throw new EpisodicError('invalid', 'parts: InvalidPartOrder: the parts must be listed in ascending order of part_number, each once')
    }
    let size = 0
    let etag: string
    try {
      // Sizes come from the store's list: S3's completion answer has none.
      const stored = new Map((await multipart.listParts(key, upload.uploadId)).map((part) => [part.partNumber, part.size]))
      for (const part of parts) size += stored.get(part.partNumber) ?? 0
      etag = (await multipart.complete(key, upload.uploadId, parts)).etag
    } catch (error) {
      throw fromStorageError(error)
    }
    await deleteUpload(deps, episode.episode_id, upload.uploadId)
    const result: CompleteMultipartResult = { episode_id: episode.episode_id, kind: upload.kind, size, etag }
    return c.json(result, 200)
  })

  app.delete('/ingest/episode/:id/multipart/:upload', auth, async (c) => {
    const { episode, upload, multipart, key } = await openUpload(c)
    let completed = false
    try {
      await multipart.abort(key, upload.uploadId)
    } catch (error) {
      // Already gone from the store (aborted or expired there): forgetting it here finishes the abort,
      // unless a completion beat it: an object now stands where the upload was going.
      const mapped = fromStorageError(error)
      if (!(mapped instanceof EpisodicError && mapped.code === 'not_found')) throw mapped
      completed = await storedObject(deps, key)
    }
    await deleteUpload(deps, episode.episode_id, upload.uploadId)
    // S3's answer to aborting a completed upload.
    if (completed) throw new EpisodicError('not_found', NO_SUCH_UPLOAD)
    return c.body(null, 204)
  })

  app.get('/episodes/:id/artifacts', read, async (c) => {
    const clientId = c.get('clientId')
    const episode = await getEpisode(deps.db, clientId, uuidParam(c.req.param('id'), 'episode not found'))
    const result: ArtifactsResult = { episode_id: episode.episode_id, artifacts: await artifactStates(deps, clientId, episode.episode_id, episode.artifacts) }
    return c.json(result, 200)
  })

  return app
}

function multipartOf(deps: Pick<Deps, 'storage'>): MultipartStore {
  const storage = requireStorage(deps)
  if (!storage.multipart) throw new EpisodicError('conflict', 'this object storage does not offer multipart uploads')
  return storage.multipart
}

/** When the part URLs minted at `now` stop working: their X-Amz-Date has whole seconds. */
function expiry(now: Date): string {
  return expiryOf({ now, expiresInSeconds: UPLOAD_URL_SECONDS }).toISOString()
}

function partUrls(multipart: MultipartStore, key: string, uploadId: string, numbers: number[], origin: string, now: Date): Promise<PartUrl[]> {
  return Promise.all(
    numbers.map(async (partNumber) => {
      const signed = await multipart.presignPart({ key, uploadId, partNumber, now, expiresInSeconds: UPLOAD_URL_SECONDS, origin })
      return { part_number: partNumber, url: signed.url }
    }),
  )
}

interface UploadRow {
  uploadId: string
  kind: ArtifactKind
  partSize: number
  partCount: number
}

async function findUpload(deps: Pick<Deps, 'db'>, episodeId: string, uploadId: string | undefined): Promise<UploadRow> {
  if (!uploadId || !/^[\x21-\x7e]{1,1024}$/.test(uploadId)) throw new EpisodicError('not_found', NO_SUCH_UPLOAD)
  const row = await deps.db.selectFrom('multipart_uploads').selectAll().where('episode_id', '=', episodeId).where('upload_id', '=', uploadId).executeTakeFirst()
  if (!row) throw new EpisodicError('not_found', NO_SUCH_UPLOAD)
  return { uploadId: row.upload_id, kind: row.kind as ArtifactKind, partSize: Number(row.part_size), partCount: row.part_count }
}

/** Whether an object is stored at `key` (a store without HEAD: unknown, taken as none). */
async function storedObject(deps: Pick<Deps, 'storage'>, key: string): Promise<boolean> {
  const head = deps.storage?.head
  return head ? (await head.call(deps.storage, key).catch(() => null)) !== null : false
}

async function deleteUpload(deps: Pick<Deps, 'db'>, episodeId: string, uploadId: string): Promise<void> {
  await deps.db.deleteFrom('multipart_uploads').where('episode_id', '=', episodeId).where('upload_id', '=', uploadId).execute()
}
