/**
 * Eval runs and their result rows: create (all baselines the caller's, or
 * nothing is written), upload one result, and finalize with the rollup. The
 * run row is the lock: a result upload holds it `for share`, finalize `for
 * update`, so no result can land in a run after its rollup was computed.
 */
import { type Kysely, type Selectable, sql } from 'kysely'
import type { Database, EvalRunsTable } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import { isUuid } from '../http/fields.ts'
import { jsonText } from '../http/json.ts'
import { truncateCodePoints } from '../http/text.ts'
import { iso } from '../clock.ts'
import type { MetricBlob } from './metric-blob.ts'
import { columnsFromFields, type FieldRow, metricFieldsSql } from './columns.ts'
import { DEFAULT_MAX_OOD_ACTION_SHARE, DEFAULT_MIN_EPISODES, rollupColumns, type RollupSummary } from './rollup.ts'
import { orderSummary } from './summary-order.ts'
import { ERROR_LIMIT, type FinalizedEvalRun } from './schemas.ts'
import { enqueueEvalRunCompleted } from '../webhooks/outbox.ts'

const RUN_NOT_FOUND = 'eval run not found'
const NOT_IN_RUN = 'baseline episode is not part of this eval run'
const REPLAY_NOT_FOUND = 'replay episode not found'

export interface NewEvalRun {
  id: string
  clientId: string
  candidatePolicyVersion: string
  baselinePolicyVersion: string | null
  baselineEpisodeIds: string[]
  name: string | null
  metadata: Record<string, unknown>
  /** Done rows needed for `ship` (default 10). */
  minEpisodes?: number
  /** Mean OOD action share above which the verdict is `hold` (default 0.25). */
  maxOodActionShare?: number
  now: Date
}

/** Creates a `pending` run with one `pending` result per baseline, in one transaction. */
export async function createEvalRun(db: Kysely<Database>, run: NewEvalRun) {
  const ids = run.baselineEpisodeIds.map((id) => id.toLowerCase())
  const malformed = ids.find((id) => !isUuid(id))
  if (malformed !== undefined) throw new EpisodicError('not_found', `baseline episode ${malformed} not found`)
  const minEpisodes = run.minEpisodes ?? DEFAULT_MIN_EPISODES
  const maxOodActionShare = run.maxOodActionShare ?? DEFAULT_MAX_OOD_ACTION_SHARE
  return await db.transaction().execute(async (trx) => {
    // `for share` keeps the baselines from being deleted before the rows reference them.
    const owned = await trx
      .selectFrom('episodes')
      .select('id')
      .where('client_id', '=', run.clientId)
      .where('id', 'in', ids)
      .forShare()
      .execute()
    if (owned.length !== ids.length) {
      const found = new Set(owned.map((r) => r.id))
      throw new EpisodicError('not_found', `baseline episode ${ids.find((id) => !found.has(id))} not found`)
    }
    const name = run.name ?? run.candidatePolicyVersion
    await trx
      .insertInto('eval_runs')
      .values({
        id: run.id,
        client_id: run.clientId,
        name,
        status: 'pending',
        candidate_policy_version: run.candidatePolicyVersion,
        baseline_policy_version: run.baselinePolicyVersion,
        metadata: jsonText(run.metadata),
        runner_kind: 'local',
        min_episodes: minEpisodes,
        max_ood_action_share: maxOodActionShare,
        created_at: run.now,
        updated_at: run.now,
      })
      .execute()
    await trx
      .insertInto('eval_results')
      .values(ids.map((id, position) => ({ eval_run_id: run.id, baseline_episode_id: id, position, status: 'pending' as const, updated_at: run.now })))
      .execute()
    return {
      eval_run_id: run.id,
      name,
      status: 'pending' as const,
      candidate_policy_version: run.candidatePolicyVersion,
      baseline_policy_version: run.baselinePolicyVersion,
      baseline_episode_ids: ids,
      metadata: run.metadata,
      runner_kind: 'local',
      min_episodes: minEpisodes,
      max_ood_action_share: maxOodActionShare,
      created_at: iso(run.now),
      updated_at: iso(run.now),
      summary: null,
      results: ids.map((id) => ({ baseline_episode_id: id, status: 'pending' as const })),
    }
  })
}

export interface ResultUpload {
  baselineEpisodeId: string
  status: 'done' | 'failed'
  replayEpisodeId: string | null
  error: string | null
  metrics: MetricBlob | null
  now: Date
}

/** Stores (or replaces) one baseline's result; 404 unknown run or baseline, 409 finalized run. */
export async function uploadResult(db: Kysely<Database>, clientId: string, runId: string, result: ResultUpload) {
  return await db.transaction().execute(async (trx) => {
    const run = await trx
      .selectFrom('eval_runs')
      .select('status')
      .where('id', '=', runId)
      .where('client_id', '=', clientId)
      .forShare()
      .executeTakeFirst()
    if (!run) throw new EpisodicError('not_found', RUN_NOT_FOUND)
    if (run.status !== 'pending') throw new EpisodicError('conflict', 'eval run is already finalized')
    if (!isUuid(result.baselineEpisodeId)) throw new EpisodicError('not_found', NOT_IN_RUN)
    if (result.replayEpisodeId !== null) {
      if (!isUuid(result.replayEpisodeId)) throw new EpisodicError('not_found', REPLAY_NOT_FOUND)
      const replay = await trx
        .selectFrom('episodes')
        .select('id')
        .where('id', '=', result.replayEpisodeId)
        .where('client_id', '=', clientId)
        .executeTakeFirst()
      if (!replay) throw new EpisodicError('not_found', REPLAY_NOT_FOUND)
    }
    const row = await trx
      .updateTable('eval_results')
      .set({
        status: result.status,
        error: result.error === null ? null : truncateCodePoints(result.error, ERROR_LIMIT),
        metrics: result.metrics === null ? null : jsonText(result.metrics),
        replay_episode_id: result.replayEpisodeId,
        updated_at: result.now,
      })
      .where('eval_run_id', '=', runId)
      .where('baseline_episode_id', '=', result.baselineEpisodeId)
      .returning(['updated_at'])
      .executeTakeFirst()
    if (!row) throw new EpisodicError('not_found', NOT_IN_RUN)
    return { eval_run_id: runId, baseline_episode_id: result.baselineEpisodeId, status: result.status, updated_at: iso(row.updated_at) }
  })
}

/** Closes the run: leftover `pending` rows become `skipped`, the rollup is stored and returned. */
export async function finalizeEvalRun(db: Kysely<Database>, clientId: string, runId: string, now: Date): Promise<FinalizedEvalRun> {
  return await db.transaction().execute(async (trx) => {
    const run = await trx
      .selectFrom('eval_runs')
      .select(['status', 'summary', 'updated_at', 'min_episodes', 'max_ood_action_share'])
      .where('id', '=', runId)
      .where('client_id', '=', clientId)
      .forUpdate()
      .executeTakeFirst()
    if (!run) throw new EpisodicError('not_found', RUN_NOT_FOUND)
    if (run.status === 'completed') {
      return { eval_run_id: runId, status: 'completed', updated_at: iso(run.updated_at), summary: orderSummary(run.summary as RollupSummary) }
    }
    // One statement: mark leftovers skipped and read back, per row, the fields the rollup needs.
    const rows = await sql<FieldRow>`
      with skipped as (
        update eval_results set status = 'skipped', updated_at = ${now}
        where eval_run_id = ${runId} and status = 'pending'
        returning baseline_episode_id
      )
      select case when s.baseline_episode_id is null then r.status else 'skipped' end as status, ${sql.raw(metricFieldsSql)}
      from eval_results r left join skipped s on s.baseline_episode_id = r.baseline_episode_id
      where r.eval_run_id = ${runId}
      order by r.position`.execute(trx)
    const summary = rollupColumns(columnsFromFields(rows.rows), {
      seed: runId,
      minEpisodes: run.min_episodes,
      maxOodActionShare: Number(run.max_ood_action_share),
    })
    await trx
      .updateTable('eval_runs')
      .set({ status: 'completed', summary: JSON.stringify(summary), updated_at: now })
      .where('id', '=', runId)
      .execute()
    await enqueueEvalRunCompleted(trx, { evalRunId: runId, clientId, summary, now })
    return { eval_run_id: runId, status: 'completed', updated_at: iso(now), summary }
  })
}

/** Row -> wire record (without results). */
export function toEvalRun(row: Selectable<EvalRunsTable>, baselineIds: string[]) {
  return {
    eval_run_id: row.id,
    name: row.name,
    status: row.status,
    candidate_policy_version: row.candidate_policy_version,
    baseline_policy_version: row.baseline_policy_version,
    baseline_episode_ids: baselineIds,
    metadata: row.metadata,
    runner_kind: row.runner_kind,
    min_episodes: row.min_episodes,
    max_ood_action_share: Number(row.max_ood_action_share),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    summary: orderSummary((row.summary ?? null) as Record<string, unknown> | null),
  }
}
