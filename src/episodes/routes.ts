/** Read endpoints for episodes: one record, and the paginated list. */
import { Hono } from 'hono'
import { requireApiKey } from '../auth/middleware.ts'
import type { AppEnv, Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { parseWith } from '../http/body.ts'
import { isUuid } from '../http/fields.ts'
import { getEpisode } from '../ingest/episodes.ts'
import { ARTIFACT_KINDS, objectKey, type ArtifactKind } from '../storage/types.ts'
import { listEpisodes } from './list.ts'

/** Signed GET URLs from the artifact route live 15 minutes (contract). */
export const ARTIFACT_URL_SECONDS = 15 * 60
import { ListEpisodesQuery } from './schemas.ts'

export function episodeRoutes(deps: Deps) {
  const app = new Hono<AppEnv>()
  app.use('*', requireApiKey(deps))

  app.get('/', async (c) => {
    const query = parseWith(ListEpisodesQuery, c.req.query())
    return c.json(await listEpisodes(deps.db, c.get('clientId'), query))
  })

  app.get('/:id', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) throw new EpisodicError('not_found', 'episode not found')
    return c.json(await getEpisode(deps.db, c.get('clientId'), id.toLowerCase()))
  })

  app.get('/:id/artifact/:kind', async (c) => {
    const id = c.req.param('id')
    const kind = c.req.param('kind') as ArtifactKind
    if (!isUuid(id) || !ARTIFACT_KINDS.includes(kind)) throw new EpisodicError('not_found', 'artifact not found')
    const clientId = c.get('clientId')
    const episode = await getEpisode(deps.db, clientId, id.toLowerCase())
    if (!deps.storage || !episode.artifacts.includes(kind)) throw new EpisodicError('not_found', 'artifact not found')
    const signed = await deps.storage.presignGet({
      key: objectKey(clientId, episode.episode_id, kind),
      now: deps.clock.now(),
      expiresInSeconds: ARTIFACT_URL_SECONDS,
      origin: deps.baseUrl ?? new URL(c.req.url).origin,
    })
    if (c.req.query('redirect') === '1') return c.redirect(signed.url, 302)
    return c.json({ episode_id: episode.episode_id, kind, url: signed.url, expires_at: signed.expiresAt.toISOString() })
  })

  return app
}
