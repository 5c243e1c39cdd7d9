/**
 * The ingest endpoints: open an episode (minting one presigned PUT URL per
 * requested artifact) and finalize it.
 */
import { Hono } from 'hono'
import { requireKey } from '../auth/middleware.ts'
import type { AppEnv, Deps } from '../context.ts'
import { readJsonBody } from '../http/body.ts'
import { uuidParam } from '../http/fields.ts'
import { sendJson } from '../http/json.ts'
import type { ArtifactKind } from '../storage/types.ts'
import { refuseArchived } from './finalize.ts'
import { findEpisode } from './rows.ts'
import { FinalizeEpisodeBody, OpenEpisodeBody, type OpenEpisodeResult } from './ingest-schemas.ts'
import { idempotent } from './idempotency.ts'
import { reopened, verifiedBytesTotal } from './upload-hooks.ts'
import { mintUploadUrls } from './upload-urls.ts'

export function ingestRoutes(deps: Deps) {
  const app = new Hono<AppEnv>()
  app.use('*', requireKey(deps))

  app.post('/episode', idempotent(deps, reopened(deps)), async (c) => {
    const body = await readJsonBody(c.req.raw, OpenEpisodeBody, deps.bodyLimit, { integers: ['seed'] })
    const clientId = c.get('clientId')
    const keyed = c.get('idempotency')
    const episodeId = keyed?.id ?? deps.random.uuid()
    // Taking over a keyed request whose process died: it may have made the episode already.
    const made = keyed?.retaken ? await findEpisode(deps.db, clientId, episodeId) : undefined
    const now = deps.clock.now()
    const kinds: ArtifactKind[] = deps.storage ? body.request_uploads : []
    const origin = kinds.length ? (deps.baseUrl ?? new URL(c.req.url).origin) : ''
    // Sign and insert at once: the row's round trip (and its wait for the
    // turn's batch) overlaps the signing. A URL that fails to sign removes
    // the row again, so a storage failure still leaves no half-opened episode.
    const signing = deps.storage ? mintUploadUrls(deps.storage, clientId, episodeId, kinds, origin, now) : Promise.resolve([])
    const inserting = made ? Promise.resolve() : deps.episodes.insert({
      id: episodeId,
      clientId,
      name: body.name ?? null,
      source: body.source,
      robot: body.robot ?? null,
      policyVersion: body.policy_version ?? null,
      envVersion: body.env_version ?? null,
      gitSha: body.git_sha ?? null,
      seed: body.seed ?? null,
      fps: body.fps ?? null,
      metadata: body.metadata,
      artifacts: kinds,
      now,
    })
    const [signed, inserted] = await Promise.allSettled([signing, inserting])
    if (inserted.status === 'rejected') throw inserted.reason
    if (signed.status === 'rejected') {
      await deps.episodes.discard(clientId, episodeId).catch((error) =>
        deps.logger.error(`open: could not remove episode ${episodeId} after signing failed`, error)
      )
      throw signed.reason
    }
    const uploadUrls = signed.value
    const result: OpenEpisodeResult = {
      episode_id: episodeId,
      status: 'recording',
      storage: deps.storage ? 'r2' : 'unconfigured',
      upload_urls: uploadUrls,
    }
    return sendJson(result, 201)
  })

  app.post('/episode/:id/finalize', async (c) => {
    const id = uuidParam(c.req.param('id'), 'episode not found')
    const body = await readJsonBody(c.req.raw, FinalizeEpisodeBody, deps.bodyLimit).catch(async (error: unknown) => {
      // An archived episode answers 409 to any body (spec, episode states), a malformed one too.
      await refuseArchived(deps.db, c.get('clientId'), id)
      throw error
    })
    const result = await deps.episodes.finalize(c.get('clientId'), id, {
      status: body.status,
      durationS: body.duration_s,
      fps: body.fps,
      bytesTotal: body.verify_artifacts ? await verifiedBytesTotal(deps, c.get('clientId'), id, body.bytes_total) : body.bytes_total,
      metadata: body.metadata,
      now: deps.clock.now(),
    })
    return sendJson(result, 200)
  })

  return app
}
