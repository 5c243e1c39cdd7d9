/**
 * The lineage and time filters of `GET /api/eval-runs` (and the portal's
 * trend page): candidate and baseline policy versions, a half-open
 * created-at range, and `baselines_of`, the runs that replayed exactly the
 * same set of baseline episodes as a given run (so their metrics compare).
 */
import { type SelectQueryBuilder, sql } from 'kysely'
import type { Database } from '../db/schema.ts'
import type { ListEvalRunsInput } from './schemas.ts'

/** The sorted baseline ids of a run, as one comparable array. */
const baselineSet = (run: unknown) =>
  sql`(select array_agg(r.baseline_episode_id order by r.baseline_episode_id) from eval_results r where r.eval_run_id = ${run})`

/** `q` narrowed by the query's filters. */
export function filterRuns<O>(q: SelectQueryBuilder<Database, 'eval_runs', O>, query: ListEvalRunsInput): SelectQueryBuilder<Database, 'eval_runs', O> {
  if (query.candidate_policy_version) q = q.where('candidate_policy_version', '=', query.candidate_policy_version)
  if (query.baseline_policy_version) q = q.where('baseline_policy_version', '=', query.baseline_policy_version)
  if (query.created_after) q = q.where('created_at', '>=', query.created_after)
  if (query.created_before) q = q.where('created_at', '<', query.created_before)
  if (query.baselines_of) {
    // Only a run of the same client counts (another client's id matches nothing, as if unknown).
    const of = sql`${query.baselines_of.toLowerCase()}::uuid`
    q = q
      .where(sql<boolean>`eval_runs.client_id = (select x.client_id from eval_runs x where x.id = ${of})`)
      .where(sql<boolean>`${baselineSet(sql.ref('eval_runs.id'))} = ${baselineSet(of)}`)
  }
  return q
}
