/**
 * Did the bytes arrive (contract, "Upload recovery"): a HEAD on the store for
 * each artifact kind of an episode, for `GET /api/episodes/{id}/artifacts`,
 * for `verify_artifacts` on finalize and for the portal's episode page.
 */
import type { Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { ARTIFACT_KINDS, type ArtifactKind, objectKey } from '../storage/types.ts'
import type { ArtifactState } from './upload-schemas.ts'

/**
 * Each kind's state, requested ones first in the episode's order. Without
 * object storage (or a store that cannot HEAD) nothing is present.
 */
export function artifactStates(deps: Pick<Deps, 'storage'>, clientId: string, episodeId: string, requested: readonly string[]): Promise<ArtifactState[]> {
  const kinds = [
    ...requested.filter((k): k is ArtifactKind => ARTIFACT_KINDS.includes(k as ArtifactKind)),
    ...ARTIFACT_KINDS.filter((k) => !requested.includes(k)),
  ]
  const head = deps.storage?.head?.bind(deps.storage)
  return Promise.all(
    kinds.map(async (kind) => {
      const found = head ? await head(objectKey(clientId, episodeId, kind)) : null
      return {
        kind,
        requested: requested.includes(kind),
        present: found !== null,
        size: found?.size ?? null,
        etag: found?.etag ?? null,
        content_type: found?.contentType ?? null,
      }
    }),
  )
}

/**
 * `verify_artifacts` on finalize: every requested kind must be in the store,
 * else 409 `artifacts missing: <kinds>` (and the caller finalizes nothing).
 * Returns the `bytes_total` to store: the one given, or the sum of the
 * present sizes when it was omitted.
 */
export async function verifyArtifacts(
  deps: Pick<Deps, 'storage'>,
  clientId: string,
  episodeId: string,
  requested: readonly string[],
  bytesTotal: number | null | undefined,
): Promise<number | null | undefined> {
  const states = (await artifactStates(deps, clientId, episodeId, requested)).filter((state) => state.requested)
  const missing = states.filter((state) => !state.present).map((state) => state.kind)
  if (missing.length > 0) throw new EpisodicError('conflict', `artifacts missing: ${missing.join(', ')}`)
  if (bytesTotal !== undefined) return bytesTotal
  return states.reduce((sum, state) => sum + (state.size ?? 0), 0)
}
