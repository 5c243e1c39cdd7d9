/** @jsxImportSource hono/jsx */
/**
 * Trends (`/portal/trends?baseline_policy_version=...`, or
 * `?baselines_of=<eval run id>` for the runs over the same baseline episodes,
 * optionally with `candidate_policy_version`, `created_after`,
 * `created_before`): each rollup metric of the completed runs that match, in
 * time order, as its delta with the 95% interval, each point a link to its
 * run. The same runs come from `GET /api/eval-runs` with the same filters
 * and `status=completed`.
 */
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { listEvalRuns } from '../eval/reads.ts'
import { METRICS } from '../eval/rollup.ts'
import { ListEvalRunsQuery } from '../eval/schemas.ts'
import { parseWith } from '../http/body.ts'
import { queryParams } from '../http/query.ts'
import { givenParams, Status } from './episodes.tsx'
import { echoable, filterError, formatDelta, formatTime, NONE } from './format.ts'
import { EpisodicError } from '../errors.ts'
import type { PortalEnv } from './guard.ts'
import { Layout, sendPage } from './layout.tsx'
import { useRoot } from './root.ts'
import { TrendChart, trendPoint } from './trend-chart.tsx'

/** The filters a trend page keeps in its links and form. */
export const TREND_FILTERS = ['baseline_policy_version', 'candidate_policy_version', 'baselines_of', 'created_after', 'created_before'] as const
/** Most runs one trend page draws (the newest ones). */
export const TREND_RUNS = 200

type RunSummary = Awaited<ReturnType<typeof listEvalRuns>>['items'][number]

/** `<root>/portal/trends?...` for a run's lineage: its baseline version, else its set of baseline episodes. */
export function trendHref(root: string, run: { eval_run_id: string; baseline_policy_version: string | null }): string {
  const params: Record<string, string> = run.baseline_policy_version
    ? { baseline_policy_version: run.baseline_policy_version }
    : { baselines_of: run.eval_run_id }
  return `${root}/portal/trends?${new URLSearchParams(params)}`
}

function TrendsPage(props: { runs: RunSummary[]; filters: Record<string, string>; capped: boolean; error?: string }) {
  const root = useRoot()
  const { runs, filters } = props
  const lineage = filters.baseline_policy_version || filters.baselines_of
  const input = (name: (typeof TREND_FILTERS)[number], label: string, placeholder = '') => (
    <label>
      {label}
      <input name={name} value={filters[name] ?? ''} maxlength={120} placeholder={placeholder} />
    </label>
  )
  return (
    <Layout title='Trends' section='trends' signedIn>
      <h1>Trends</h1>
      <p class='sub'>
        {lineage
          ? `Completed eval runs ${
            filters.baseline_policy_version ? `against baseline ${filters.baseline_policy_version}` : 'over the same baseline episodes as the chosen run'
          }${
            filters.candidate_policy_version ? `, candidate ${filters.candidate_policy_version}` : ''
          }, oldest first. Each point is a run's delta (candidate - baseline) with its 95% interval; click it to open the run.`
          : 'Choose a baseline version (or open the trend from an eval run) to follow a policy across eval runs.'}
      </p>
      {props.error && <p class='error-box' role='alert' id='filter-error'>{props.error}</p>}
      <form class='filters' method='get' action={`${root}/portal/trends`}>
        {input('baseline_policy_version', 'baseline version')}
        {input('candidate_policy_version', 'candidate version')}
        {input('created_after', 'created from', '2026-05-01')}
        {input('created_before', 'created before', '2026-06-01')}
        {filters.baselines_of && <input type='hidden' name='baselines_of' value={filters.baselines_of} />}
        <button type='submit'>Show</button>
        <a href={`${root}/portal/trends`}>Clear</a>
      </form>
      {lineage && runs.length === 0 && <p class='card muted' id='no-runs'>No completed eval runs match.</p>}
      {props.capped && <p class='notice'>{`Showing the newest ${TREND_RUNS} runs; narrow the time range to see older ones.`}</p>}
      {lineage && runs.length > 0 && (
        <>
          {METRICS.map((spec) => {
            const points = runs.map((r) => trendPoint(r, spec, `${root}/portal/eval-runs/${r.eval_run_id}`))
            return (
              <section class='trend card' id={`trend-${spec.name}`}>
                <h2>{`${spec.label} (${spec.direction} is better)`}</h2>
                <p class='legend muted'>
                  Delta of each run with its 95% interval; <span class='glyph-better' aria-hidden='true'>●</span> better,{' '}
                  <span class='glyph-worse' aria-hidden='true'>○</span> worse, dashed line: no change. Tab to a point to read it; Enter opens the run.
                </p>
                {points.every((p) => p.delta === null) ? <p class='muted'>No run has a value for this metric.</p> : <TrendChart spec={spec} points={points} />}
              </section>
            )
          })}
          <h2>Runs</h2>
          <div class='scroll'>
            <table class='stack' id='trend-runs'>
              <thead>
                <tr>
                  <th>name</th>
                  <th>created</th>
                  <th>candidate</th>
                  <th>baseline</th>
                  {METRICS.map((m) => <th key={m.name} class='num'>{m.name}</th>)}
                </tr>
              </thead>
              <tbody>
                {runs.map((r) => (
                  <tr key={r.eval_run_id}>
                    <td class='head'>
                      <a href={`${root}/portal/eval-runs/${r.eval_run_id}`}>{r.name}</a> <Status status={r.status} />
                    </td>
                    <td data-label='created'>
                      <time datetime={r.created_at}>{formatTime(r.created_at)}</time>
                    </td>
                    <td data-label='candidate'>{r.candidate_policy_version}</td>
                    <td data-label='baseline'>{r.baseline_policy_version ?? NONE}</td>
                    {METRICS.map((m) => {
                      const p = trendPoint(r, m, '')
                      return <td key={m.name} class='num' data-label={m.name}>{formatDelta(m.name, p.delta)}</td>
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Layout>
  )
}

/** Mounted at `/portal/trends` behind the session guard. */
export function trendPages(deps: Deps) {
  const app = new Hono<PortalEnv>()
  app.get('/', async (c) => {
    const filters = Object.fromEntries(Object.entries(givenParams(queryParams(c.req.url))).filter(([k]) => (TREND_FILTERS as readonly string[]).includes(k)))
    let query
    try {
      query = parseWith(ListEvalRunsQuery, { ...filters, status: 'completed', limit: String(TREND_RUNS) })
    } catch (error) {
      if (!(error instanceof EpisodicError) || error.code !== 'invalid' || !echoable(filters)) throw error
      return sendPage(c, 400, <TrendsPage runs={[]} filters={filters} capped={false} error={filterError(error.message)} />)
    }
    const lineage = Boolean(query.baseline_policy_version || query.baselines_of)
    const page = lineage ? await listEvalRuns(deps.db, c.get('clientId'), query) : { items: [], next_cursor: null }
    return sendPage(c, 200, <TrendsPage runs={[...page.items].reverse()} filters={filters} capped={page.next_cursor !== null} />)
  })
  return app
}
