/** Reading eval runs: one with its result rows, and the paginated list. */
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import { keysetPage, toPage } from '../http/cursor.ts'
import { iso } from '../clock.ts'
import { toEvalRun } from './runs.ts'
import { filterRuns } from './run-filters.ts'
import type { ListEvalRunsInput } from './schemas.ts'

/** The caller's run with its result rows in baseline order, or not_found. */
export async function getEvalRun(db: Kysely<Database>, clientId: string, runId: string) {
  const run = await db.selectFrom('eval_runs').selectAll().where('id', '=', runId).where('client_id', '=', clientId).executeTakeFirst()
  if (!run) throw new EpisodicError('not_found', 'eval run not found')
  const results = await db
    .selectFrom('eval_results')
    .select(['baseline_episode_id', 'status', 'error', 'metrics', 'replay_episode_id', 'updated_at'])
    .where('eval_run_id', '=', runId)
    .orderBy('position')
    .execute()
  return {
    ...toEvalRun(run, results.map((r) => r.baseline_episode_id)),
    results: results.map((r) => ({ ...r, updated_at: iso(r.updated_at) })),
  }
}

/** The caller's runs, newest first, with cursor pagination. */
export async function listEvalRuns(db: Kysely<Database>, clientId: string, query: ListEvalRunsInput) {
  let q = db.selectFrom('eval_runs').selectAll().where('client_id', '=', clientId)
  if (query.status) q = q.where('status', '=', query.status)
  q = filterRuns(q, query)
  const rows = await keysetPage(q, query.cursor, query.limit).execute()
  const page = rows.slice(0, query.limit)
  const ids = page.map((r) => r.id)
  const baselines = ids.length
    ? await db.selectFrom('eval_results').select(['eval_run_id', 'baseline_episode_id']).where('eval_run_id', 'in', ids).orderBy('position').execute()
    : []
  const byRun = new Map<string, string[]>()
  for (const b of baselines) {
    const list = byRun.get(b.eval_run_id)
    if (list) list.push(b.baseline_episode_id)
    else byRun.set(b.eval_run_id, [b.baseline_episode_id])
  }
  return toPage(rows, query.limit, (r) => toEvalRun(r, byRun.get(r.id) ?? []))
}
