/** Read endpoints for episodes: one record, and the paginated list. */
import { Hono } from 'hono'
import { requireApiKey } from '../auth/middleware.ts'
import type { AppEnv, Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { parseWith } from '../http/body.ts'
import { isUuid } from '../http/fields.ts'
import { getEpisode } from '../ingest/episodes.ts'
import { listEpisodes } from './list.ts'
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

  return app
}
