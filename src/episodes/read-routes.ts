/** Read endpoints for episodes: one record, and the paginated list. */
import { Hono } from 'hono'
import { requireKeyOrSession } from '../auth/middleware.ts'
import type { AppEnv, Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { sendJson } from '../http/json.ts'
import { parseWith } from '../http/body.ts'
import { queryParams, readQuery } from '../http/query.ts'
import { uuidParam } from '../http/fields.ts'
import { findEpisode, getEpisode } from './rows.ts'
import { ARTIFACT_KINDS, ARTIFACT_URL_SECONDS, type ArtifactKind, objectKey } from '../storage/types.ts'
import { listEpisodes } from './list.ts'
import { splitMetadataParams } from './metadata-filter.ts'
import { type ArtifactAccess, ArtifactUrlQuery, ListEpisodesQuery } from './schemas.ts'

export function episodeRoutes(deps: Deps) {
  const app = new Hono<AppEnv>()
  app.use('*', requireKeyOrSession(deps))

  app.get('/', async (c) => {
    const { filters, rest } = splitMetadataParams(queryParams(c.req.url))
    const query = parseWith(ListEpisodesQuery, rest)
    return sendJson(await listEpisodes(deps.db, c.get('clientId'), query, filters))
  })

  app.get('/:id', async (c) => {
    return sendJson(await getEpisode(deps.db, c.get('clientId'), uuidParam(c.req.param('id'), 'episode not found')))
  })

  app.get('/:id/artifact/:kind', async (c) => {
    // One body for every miss (malformed, unknown, foreign, never requested):
    // the answer must not tell which.
    const notFound = () => new EpisodicError('not_found', 'artifact not found')
    // Read strictly, as every query is: `redirect=2`, a `\u0000` or a broken escape is a 400, never passed over.
    const { redirect } = readQuery(c.req.url, ArtifactUrlQuery)
    const id = uuidParam(c.req.param('id'), 'artifact not found')
    const kind = c.req.param('kind') as ArtifactKind
    if (!ARTIFACT_KINDS.includes(kind)) throw notFound()
    const clientId = c.get('clientId')
    const episode = await findEpisode(deps.db, clientId, id)
    if (!episode || !deps.storage || !episode.artifacts.includes(kind)) throw notFound()
    const signed = await deps.storage.presignGet({
      key: objectKey(clientId, episode.episode_id, kind),
      now: deps.clock.now(),
      expiresInSeconds: ARTIFACT_URL_SECONDS,
      origin: deps.baseUrl ?? new URL(c.req.url).origin,
    })
    if (redirect === '1' || redirect === 'true') return c.redirect(signed.url, 302)
    const result: ArtifactAccess = { episode_id: episode.episode_id, kind, url: signed.url, expires_at: signed.expiresAt.toISOString() }
    return sendJson(result)
  })

  return app
}
