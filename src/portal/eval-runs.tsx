/** @jsxImportSource hono/jsx */
/**
 * Eval-run pages: the list (`/portal/eval-runs`) and one run
 * (`/portal/eval-runs/:id`, the link `episodic replay run` prints) with its
 * header, the verdict with its reasons, the rollup table (intervals as
 * error bars, n and provenance per metric), the action divergence per key,
 * a server-drawn chart of per-episode baseline vs candidate
 * values, and the result rows linking baseline and replay episodes.
 */
import { Hono } from 'hono'
import type { Kysely } from 'kysely'
import type { Deps } from '../context.ts'
import type { Database } from '../db/schema.ts'
import { getEvalRun, listEvalRuns } from '../eval/reads.ts'
import { METRICS, type MetricSpec } from '../eval/rollup.ts'
import { ListEvalRunsQuery } from '../eval/schemas.ts'
import { parseWith } from '../http/body.ts'
import { uuidParam } from '../http/fields.ts'
import { queryParams } from '../http/query.ts'
import { shortId } from '../episodes/rows.ts'
import { chartPoints, chartValue, ResultChart } from './chart.tsx'
import { EpisodicError } from '../errors.ts'
import { givenParams, Select, Status } from './episodes.tsx'
import { echoable, filterError, formatNumber, formatTime, NONE, prettyJson } from './format.ts'
import type { PortalEnv } from './guard.ts'
import { Layout, sendPage } from './layout.tsx'
import { useRoot } from './root.ts'
import { ActionDivergence, Recommend, RollupTable, Verdict } from './rollup.tsx'
import { redactLocalPaths } from './redact.ts'
import { resultHref } from './replay-detail.tsx'
import { trendHref } from './trends.tsx'

type EvalRun = Awaited<ReturnType<typeof getEvalRun>>
type RunSummary = Awaited<ReturnType<typeof listEvalRuns>>['items'][number]

function When(props: { iso: string }) {
  return <time datetime={props.iso}>{formatTime(props.iso)}</time>
}

/** The list's filters, as the form shows them (the API's `GET /api/eval-runs` parameters). */
const RUN_FILTERS = ['candidate_policy_version', 'baseline_policy_version', 'status', 'created_after', 'created_before'] as const

function RunList(props: { items: RunSummary[]; next: string | null; query: Record<string, string>; paged: boolean; error?: string }) {
  const root = useRoot()
  const f = props.query
  const filtered = RUN_FILTERS.some((name) => f[name])
  const input = (name: (typeof RUN_FILTERS)[number], label: string, placeholder = '') => (
    <label>
      {label}
      <input name={name} value={f[name] ?? ''} maxlength={120} placeholder={placeholder} size={name.startsWith('created') ? 12 : undefined} />
    </label>
  )
  // Every filter and the page size stay on the pager's links; only the cursor changes.
  const href = (cursor?: string) => {
    const params = new URLSearchParams()
    for (const [name, value] of Object.entries(props.query)) if (name !== 'cursor') params.set(name, value)
    if (cursor) params.set('cursor', cursor)
    return `${root}/portal/eval-runs${params.size ? `?${params}` : ''}`
  }
  return (
    <Layout title='Eval runs' section='eval-runs' signedIn>
      <h1>Eval runs</h1>
      <p class='sub'>Replay regression campaigns, newest first.</p>
      {props.error && <p class='error-box' role='alert' id='filter-error'>{props.error}</p>}
      <form class='filters' method='get' action={`${root}/portal/eval-runs`}>
        {input('candidate_policy_version', 'candidate version')}
        {input('baseline_policy_version', 'baseline version')}
        <Select name='status' label='status' options={['pending', 'completed']} value={f.status} />
        {input('created_after', 'created from', '2026-05-01')}
        {input('created_before', 'created before', '2026-06-01')}
        <button type='submit'>Filter</button>
        <a href={`${root}/portal/eval-runs`}>Clear</a>
      </form>
      {props.items.length === 0
        ? (
          <p class='card muted'>
            {filtered || props.error ? 'No eval runs match these filters.' : (
              <>
                No eval runs yet. Start one with <code>episodic replay run</code>.
              </>
            )}
          </p>
        )
        : (
          <div class='scroll'>
            <table class='stack'>
              <thead>
                <tr>
                  <th>name</th>
                  <th>status</th>
                  <th>candidate</th>
                  <th>baseline</th>
                  <th class='num'>episodes</th>
                  <th>recommend</th>
                  <th>created</th>
                </tr>
              </thead>
              <tbody>
                {props.items.map((r) => (
                  <tr>
                    <td class='head'>
                      <a href={`${root}/portal/eval-runs/${r.eval_run_id}`}>{r.name}</a>
                    </td>
                    <td data-label='status'>
                      <Status status={r.status} />
                    </td>
                    <td data-label='candidate'>{r.candidate_policy_version}</td>
                    <td data-label='baseline'>{r.baseline_policy_version ?? NONE}</td>
                    <td class='num' data-label='episodes'>{String(r.baseline_episode_ids.length)}</td>
                    <td data-label='recommend'>
                      <Recommend summary={r.summary} />
                    </td>
                    <td data-label='created'>
                      <When iso={r.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      <nav class='pager' aria-label='pages'>
        {props.paged && <a href={href()}>First page</a>}
        {props.next && <a href={href(props.next)} rel='next'>Next page →</a>}
      </nav>
    </Layout>
  )
}

/** The column the chart shows: the one asked for, else reward_total, else the first with values. */
function chartColumn(
  rows: Array<{ metrics: Record<string, unknown> | null }>,
  asked: string | undefined,
): { spec: MetricSpec; available: MetricSpec[] } | null {
  const available = METRICS.filter((spec) =>
    rows.some((r) => r.metrics && (chartValue(r.metrics[`${spec.column}_baseline`]) !== null || chartValue(r.metrics[`${spec.column}_candidate`]) !== null))
  )
  const spec = available.find((s) => s.column === asked) ?? available.find((s) => s.column === 'reward_total') ?? available[0]
  return spec ? { spec, available } : null
}

function RunPage(props: { run: EvalRun; names: Map<string, string>; chart?: string }) {
  const root = useRoot()
  const { run, names } = props
  const label = (id: string) => names.get(id) ?? `episode_${shortId(id)}`
  const uploaded = run.results.filter((r) => r.status !== 'pending').length
  const rows = run.results.map((r) => ({ label: label(r.baseline_episode_id), metrics: r.metrics as Record<string, unknown> | null, status: r.status }))
  const chart = chartColumn(rows, props.chart)
  const reward = (m: Record<string, unknown> | null, side: string) => formatNumber(chartValue(m?.[`reward_total_${side}`]))
  return (
    <Layout title={run.name} section='eval-runs' signedIn>
      <h1>{run.name}</h1>
      <p class='sub'>
        <Status status={run.status} /> {`candidate ${run.candidate_policy_version} vs baseline ${run.baseline_policy_version ?? '(not given)'}`} ·{' '}
        <a href={trendHref(root, run)} id='trend-link'>trend</a>
      </p>
      <div class='card'>
        <dl class='fields'>
          <dt>eval_run_id</dt>
          <dd>
            <code>{run.eval_run_id}</code>
          </dd>
          <dt>candidate_policy_version</dt>
          <dd>{run.candidate_policy_version}</dd>
          <dt>baseline_policy_version</dt>
          <dd>{run.baseline_policy_version ?? <span class='muted'>{NONE}</span>}</dd>
          <dt>status</dt>
          <dd>
            <Status status={run.status} />
          </dd>
          <dt>created_at</dt>
          <dd>
            <When iso={run.created_at} />
          </dd>
          <dt>updated_at</dt>
          <dd>
            <When iso={run.updated_at} />
          </dd>
          <dt>baseline episodes</dt>
          <dd>{`${run.baseline_episode_ids.length} (${uploaded} with a result)`}</dd>
          <dt>runner_kind</dt>
          <dd>{run.runner_kind}</dd>
          <dt>min_episodes</dt>
          <dd>{String(run.min_episodes)}</dd>
          <dt>max_ood_action_share</dt>
          <dd>{String(run.max_ood_action_share)}</dd>
        </dl>
      </div>
      <h2>Rollup</h2>
      {run.status !== 'completed' || !run.summary
        ? (
          <p class='notice' id='not-finalized'>
            {`Not finalized yet: the rollup and the recommendation appear once the run is finalized (${uploaded} of ${run.results.length} results uploaded so far).`}
            {' A run that stopped part way goes on with '}
            <code>{`episodic replay run --resume ${run.eval_run_id} --policy ...`}</code>
            {', which replays the baselines without a result and finalizes.'}
          </p>
        )
        : (
          <>
            <Verdict summary={run.summary} />
            <RollupTable summary={run.summary} />
            <h2>Action divergence</h2>
            <ActionDivergence summary={run.summary} rows={rows} />
          </>
        )}
      <h2>Per-episode values</h2>
      {!chart ? <p class='muted'>No per-episode metrics uploaded yet.</p> : (
        <div class='card'>
          <nav class='chart-nav' aria-label='chart metric'>
            {chart.available.map((spec) => (
              <a href={`${root}/portal/eval-runs/${run.eval_run_id}?chart=${spec.column}`} {...(spec === chart.spec ? { 'aria-current': 'true' } : {})}>
                {spec.column}
              </a>
            ))}
          </nav>
          <ResultChart points={chartPoints(rows, chart.spec.column)} spec={chart.spec} column={chart.spec.column} />
        </div>
      )}
      <h2>Results</h2>
      <div class='scroll'>
        <table id='results' class='stack'>
          <thead>
            <tr>
              <th class='num'>#</th>
              <th>baseline episode</th>
              <th>status</th>
              <th>replay episode</th>
              <th class='num'>reward baseline → candidate</th>
              <th class='num'>action L2</th>
              <th>error</th>
            </tr>
          </thead>
          <tbody>
            {run.results.map((r, i) => {
              const m = r.metrics as Record<string, unknown> | null
              return (
                <tr data-status={r.status}>
                  <td class='num rownum'>{String(i + 1)}</td>
                  <td class='head'>
                    <a href={`${root}/portal/episodes/${r.baseline_episode_id}`} class='baseline-link'>{label(r.baseline_episode_id)}</a>
                  </td>
                  <td data-label='status'>
                    <Status status={r.status} /> <a href={resultHref(root, run.eval_run_id, r.baseline_episode_id)} class='result-link'>details</a>
                  </td>
                  <td data-label='replay'>
                    {r.replay_episode_id
                      ? <a href={`${root}/portal/episodes/${r.replay_episode_id}`} class='replay-link'>{label(r.replay_episode_id)}</a>
                      : <span class='muted'>{NONE}</span>}
                  </td>
                  <td class='num' data-label='reward'>{m ? `${reward(m, 'baseline')} → ${reward(m, 'candidate')}` : NONE}</td>
                  <td class='num' data-label='action L2'>{formatNumber(chartValue(m?.action_l2_mean))}</td>
                  <td class='wrap full' data-label='error'>
                    {r.error
                      ? <pre class='error' tabindex={0} role='region' aria-label={`error of row ${i + 1}`}>{redactLocalPaths(r.error)}</pre>
                      : <span class='muted'>{NONE}</span>}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      <h2>Metadata</h2>
      <pre class='json' id='metadata' tabindex={0} role='region' aria-label='metadata'>{prettyJson(run.metadata)}</pre>
    </Layout>
  )
}

/** Display names of the client's episodes among `ids` (one query; foreign ids simply are not found). */
async function displayNames(db: Kysely<Database>, clientId: string, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)]
  if (unique.length === 0) return new Map()
  const rows = await db.selectFrom('episodes').select(['id', 'name']).where('client_id', '=', clientId).where('id', 'in', unique).execute()
  return new Map(rows.map((r) => [r.id, r.name ?? `episode_${shortId(r.id)}`]))
}

/** Mounted at `/portal/eval-runs` behind the session guard. */
export function evalRunPages(deps: Deps) {
  const app = new Hono<PortalEnv>()
  app.get('/', async (c) => {
    const params = givenParams(queryParams(c.req.url))
    let query
    try {
      query = parseWith(ListEvalRunsQuery, params)
    } catch (error) {
      // A filter value the list refuses: the same page, the form as typed, and what is wrong with which field.
      if (!(error instanceof EpisodicError) || error.code !== 'invalid' || !echoable(params)) throw error
      return sendPage(c, 400, <RunList items={[]} next={null} query={params} paged={false} error={filterError(error.message)} />)
    }
    const page = await listEvalRuns(deps.db, c.get('clientId'), query)
    return sendPage(c, 200, <RunList items={page.items} next={page.next_cursor} query={params} paged={!!query.cursor} />)
  })
  app.get('/:id', async (c) => {
    const run = await getEvalRun(deps.db, c.get('clientId'), uuidParam(c.req.param('id'), 'eval run not found'))
    const ids = run.results.flatMap((r) => (r.replay_episode_id ? [r.baseline_episode_id, r.replay_episode_id] : [r.baseline_episode_id]))
    const names = await displayNames(deps.db, c.get('clientId'), ids)
    return sendPage(c, 200, <RunPage run={run} names={names} chart={c.req.query('chart')} />)
  })
  return app
}
