/** @jsxImportSource hono/jsx */
/**
 * One result row of an eval run (`/portal/eval-runs/:id/results/:baseline`):
 * its metrics and error, and the baseline's recorded actions beside the
 * candidate's, key by key (the candidate's come from the replay episode's
 * `actions.npz`, which `episodic replay run --upload-actions` uploads).
 */
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { EpisodicError } from '../errors.ts'
import { getEvalRun } from '../eval/reads.ts'
import { isUuid } from '../http/fields.ts'
import { getEpisode } from '../episodes/rows.ts'
import type { Episode } from '../episodes/ingest-schemas.ts'
import { Status } from './episodes.tsx'
import { formatTime, NONE, prettyJson } from './format.ts'
import type { PortalEnv } from './guard.ts'
import { Layout, sendPage } from './layout.tsx'
import { PLOT_PAGE_CSP, PlotAssets, PlotSection, type PlotSource } from './plots/plot-section.tsx'
import { redactLocalPaths } from './redact.ts'
import { useRoot } from './root.ts'

type EvalRun = Awaited<ReturnType<typeof getEvalRun>>

/** The page's link from a run's result row. */
export function resultHref(root: string, runId: string, baselineId: string): string {
  return `${root}/portal/eval-runs/${runId}/results/${baselineId}`
}

function Comparison(props: { baseline: Episode; replay: Episode | null; storage: boolean; status: string }) {
  const { baseline, replay } = props
  if (!props.storage) return <p class='muted' id='compare-none'>This deployment has no object storage, so no actions can be shown.</p>
  if (!baseline.artifacts.includes('actions')) return <p class='muted' id='compare-none'>The baseline episode has no actions.npz.</p>
  const candidate = replay?.artifacts.includes('actions') ?? false
  const sources: PlotSource[] = [{ episodeId: baseline.episode_id, kind: 'actions', label: 'baseline' }]
  if (candidate) sources.push({ episodeId: replay!.episode_id, kind: 'actions', label: 'candidate' })
  return (
    <>
      {candidate
        ? <p class='muted'>Baseline dashed, candidate solid, one colour per component. Drag to zoom, double-click to zoom out.</p>
        : props.status !== 'done'
        ? (
          <p class='notice' id='candidate-actions-none'>
            {props.status === 'failed'
              ? "This episode failed during the replay, so no candidate actions were recorded; only the baseline's are shown."
              : `This episode was not replayed (${props.status}), so only the baseline's actions are shown.`}
          </p>
        )
        : (
          <p class='notice' id='candidate-actions-howto'>
            {"The candidate's actions were not uploaded for this result, so only the baseline's are shown. Run "}
            <code>episodic replay run ... --upload-actions</code>
            {' (or pass '}
            <code>{'{ uploadActions: true }'}</code>
            {" to runAgainst) to upload them as the replay episode's actions.npz and see them here beside the baseline's."}
          </p>
        )}
      <PlotSection id='compare-actions' sources={sources} fps={baseline.fps} />
      <PlotAssets />
    </>
  )
}

function ResultPage(props: { run: EvalRun; row: EvalRun['results'][number]; baseline: Episode; replay: Episode | null; storage: boolean }) {
  const root = useRoot()
  const { run, row, baseline, replay } = props
  return (
    <Layout title={`${baseline.display_name} · ${run.name}`} section='eval-runs' signedIn>
      <h1>{baseline.display_name}</h1>
      <p class='sub'>
        <Status status={row.status} /> {'result in eval run '}
        <a href={`${root}/portal/eval-runs/${run.eval_run_id}`}>{run.name}</a>
        {` (candidate ${run.candidate_policy_version} vs baseline ${run.baseline_policy_version ?? '(not given)'})`}
      </p>
      <div class='card'>
        <dl class='fields'>
          <dt>baseline episode</dt>
          <dd>
            <a href={`${root}/portal/episodes/${baseline.episode_id}`}>{baseline.display_name}</a>
          </dd>
          <dt>replay episode</dt>
          <dd>{replay ? <a href={`${root}/portal/episodes/${replay.episode_id}`}>{replay.display_name}</a> : <span class='muted'>{NONE}</span>}</dd>
          <dt>status</dt>
          <dd>
            <Status status={row.status} />
          </dd>
          <dt>updated_at</dt>
          <dd>
            <time datetime={row.updated_at}>{formatTime(row.updated_at)}</time>
          </dd>
        </dl>
      </div>
      {row.error && (
        <>
          <h2>Error</h2>
          <pre class='error' id='result-error' tabindex={0} role='region' aria-label='error'>{redactLocalPaths(row.error)}</pre>
        </>
      )}
      <h2>Actions: baseline beside candidate</h2>
      <Comparison baseline={baseline} replay={replay} storage={props.storage} status={row.status} />
      <h2>Metrics</h2>
      <pre class='json' id='result-metrics' tabindex={0} role='region' aria-label='metric blob'>{row.metrics ? prettyJson(row.metrics) : NONE}</pre>
    </Layout>
  )
}

/** Mounted at `/portal` behind the session guard, before the eval-run pages. */
export function replayDetailPages(deps: Deps) {
  const app = new Hono<PortalEnv>()
  app.get('/eval-runs/:id/results/:baseline', async (c) => {
    const { id, baseline: baselineId } = c.req.param()
    if (!isUuid(id) || !isUuid(baselineId)) throw new EpisodicError('not_found', 'result not found')
    const clientId = c.get('clientId')
    const run = await getEvalRun(deps.db, clientId, id.toLowerCase())
    const row = run.results.find((r) => r.baseline_episode_id === baselineId.toLowerCase())
    if (!row) throw new EpisodicError('not_found', 'result not found')
    const baseline = await getEpisode(deps.db, clientId, row.baseline_episode_id)
    const replay = row.replay_episode_id ? await getEpisode(deps.db, clientId, row.replay_episode_id).catch(() => null) : null
    return sendPage(c, 200, <ResultPage run={run} row={row} baseline={baseline} replay={replay} storage={deps.storage !== null} />, PLOT_PAGE_CSP)
  })
  return app
}
