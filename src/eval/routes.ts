/**
 * Eval-run endpoints: create, upload a result and finalize under
 * `/api/ingest/eval-run`, and the reads under `/api/eval-runs`.
 */
import { Hono } from 'hono'
import { requireKey, requireKeyOrSession } from '../auth/middleware.ts'
import type { AppEnv, Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { readJsonBody } from '../http/body.ts'
import { sendJson } from '../http/json.ts'
import { readQuery } from '../http/query.ts'
import { uuidParam } from '../http/fields.ts'
import { idempotent } from '../episodes/idempotency.ts'
import { getEvalRun, listEvalRuns } from './reads.ts'
import { createEvalRun, finalizeEvalRun, uploadResult } from './runs.ts'
import { CreateEvalRunBody, FinalizeEvalRunBody, ListEvalRunsQuery, UploadResultBody } from './schemas.ts'

const runId = (id: string) => uuidParam(id, 'eval run not found')

/** Writes, mounted at `/api/ingest/eval-run`. */
export function evalIngestRoutes(deps: Deps) {
  const app = new Hono<AppEnv>()
  app.use('*', requireKey(deps))

  app.post('/', idempotent(deps), async (c) => {
    const body = await readJsonBody(c.req.raw, CreateEvalRunBody, deps.bodyLimit)
    const keyed = c.get('idempotency')
    const id = keyed?.id ?? deps.random.uuid()
    if (keyed?.retaken) {
      // Taking over a keyed request whose process died after making the run: answer with it, as created.
      const made = await getEvalRun(deps.db, c.get('clientId'), id).catch((error: unknown) => {
        if (error instanceof EpisodicError && error.code === 'not_found') return undefined
        throw error
      })
      if (made) return sendJson({ ...made, results: made.results.map((r) => ({ baseline_episode_id: r.baseline_episode_id, status: r.status })) }, 201)
    }
    const run = await createEvalRun(deps.db, {
      id,
      clientId: c.get('clientId'),
      candidatePolicyVersion: body.candidate_policy_version,
      baselinePolicyVersion: body.baseline_policy_version ?? null,
      baselineEpisodeIds: body.baseline_episode_ids,
      name: body.name ?? null,
      metadata: body.metadata,
      minEpisodes: body.min_episodes,
      maxOodActionShare: body.max_ood_action_share,
      now: deps.clock.now(),
    })
    return sendJson(run, 201)
  })

  app.post('/:id/result', async (c) => {
    const id = runId(c.req.param('id'))
    const body = await readJsonBody(c.req.raw, UploadResultBody, deps.bodyLimit)
    const stored = await uploadResult(deps.db, c.get('clientId'), id, {
      baselineEpisodeId: body.baseline_episode_id.toLowerCase(),
      status: body.status,
      replayEpisodeId: body.replay_episode_id?.toLowerCase() ?? null,
      error: body.error ?? null,
      metrics: body.metrics ?? null,
      now: deps.clock.now(),
    })
    return sendJson(stored, 200)
  })

  app.post('/:id/finalize', async (c) => {
    const id = runId(c.req.param('id'))
    await readJsonBody(c.req.raw, FinalizeEvalRunBody, deps.bodyLimit)
    return sendJson(await finalizeEvalRun(deps.db, c.get('clientId'), id, deps.clock.now()), 200)
  })

  return app
}

/** Reads, mounted at `/api/eval-runs`. */
export function evalReadRoutes(deps: Deps) {
  const app = new Hono<AppEnv>()
  app.use('*', requireKeyOrSession(deps))
  app.get('/', async (c) => sendJson(await listEvalRuns(deps.db, c.get('clientId'), readQuery(c.req.url, ListEvalRunsQuery))))
  app.get('/:id', async (c) => sendJson(await getEvalRun(deps.db, c.get('clientId'), runId(c.req.param('id')))))
  return app
}
