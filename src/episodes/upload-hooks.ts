/**
 * The two places upload recovery reaches into open and finalize, kept here
 * so those routes change by one line each: an open replayed under its
 * `Idempotency-Key` gets freshly minted upload URLs, and `verify_artifacts`
 * checks the store before finalize writes anything.
 */
import type { Context } from 'hono'
import type { AppEnv, Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import type { ArtifactKind } from '../storage/types.ts'
import { verifyArtifacts } from './artifacts.ts'
import type { Replay } from './idempotency.ts'
import type { OpenEpisodeResult } from './ingest-schemas.ts'
import { findEpisode } from './rows.ts'
import { mintUploadUrls } from './upload-urls.ts'

/**
 * Replays an open: the same episode id, with upload URLs minted now (the
 * first ones may have expired), while the episode still takes uploads
 * (`recording` or `failed`, as for fresh URLs); a `ready` or `archived` one
 * gets none, so a late retry cannot overwrite what was recorded.
 */
export function reopened(deps: Deps): Replay {
  return async (stored, c: Context<AppEnv>) => {
    const first = stored as OpenEpisodeResult
    if (!deps.storage || first.upload_urls.length === 0) return first
    const episode = await findEpisode(deps.db, c.get('clientId'), first.episode_id)
    if (episode?.status !== 'recording' && episode?.status !== 'failed') return { ...first, upload_urls: [] }
    const kinds = first.upload_urls.map((entry) => entry.kind as ArtifactKind)
    const origin = deps.baseUrl ?? new URL(c.req.url).origin
    return { ...first, upload_urls: await mintUploadUrls(deps.storage, c.get('clientId'), first.episode_id, kinds, origin, deps.clock.now()) }
  }
}

/**
 * `bytes_total` for a finalize with `verify_artifacts`: throws 409 when a
 * requested artifact is missing. Unknown episodes fall through to finalize's
 * 404, archived ones to its 409.
 */
export async function verifiedBytesTotal(
  deps: Deps,
  clientId: string,
  episodeId: string,
  bytesTotal: number | null | undefined,
): Promise<number | null | undefined> {
  const episode = await findEpisode(deps.db, clientId, episodeId)
  if (!episode) throw new EpisodicError('not_found', 'episode not found')
  if (episode.status === 'archived') return bytesTotal
  return verifyArtifacts(deps, clientId, episodeId, episode.artifacts, bytesTotal)
}
