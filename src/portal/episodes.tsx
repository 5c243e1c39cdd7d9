/** @jsxImportSource hono/jsx */
/**
 * Episode pages: the filtered, cursor-paged list (`/portal/episodes`) and one
 * episode with every field, its metadata as the stored JSON, its artifacts
 * through the artifact route and the video in a `<video>` element
 * (`/portal/episodes/:id`). Reads go through the same per-client functions
 * as the API, so another client's episode is simply not found.
 */
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { artifactStates } from '../episodes/artifacts.ts'
import type { ArtifactState } from '../episodes/upload-schemas.ts'
import { listEpisodes } from '../episodes/list.ts'
import { EpisodeStatusSchema, ListEpisodesQuery } from '../episodes/schemas.ts'
import { episodesByShortId } from '../episodes/short-id.ts'
import { METADATA_PREFIX, metadataParamsFromText, splitMetadataParams } from '../episodes/metadata-filter.ts'
import { EpisodicError } from '../errors.ts'
import { parseWith } from '../http/body.ts'
import { isUuid, uuidParam } from '../http/fields.ts'
import { queryParams } from '../http/query.ts'
import { getEpisode } from '../episodes/rows.ts'
import { type Episode, EpisodeSourceSchema } from '../episodes/ingest-schemas.ts'
import { echoable, filterError, formatBytes, formatDuration, formatNumber, formatTime, NONE, prettyJson } from './format.ts'
import { Layout, sendPage } from './layout.tsx'
import { EpisodePlots } from './plots/episode-plots.tsx'
import { PLOT_PAGE_CSP } from './plots/plot-section.tsx'
import { resultHref } from './replay-detail.tsx'
import { useRoot } from './root.ts'
import { Artifacts } from './artifacts.tsx'
import type { PortalEnv } from './guard.ts'

const FILTERS = ['source', 'status', 'robot', 'policy_version', 'created_after', 'created_before'] as const
/** Kept on the pager's links along with the filters, so every page has the size asked for. */
const PAGER_PARAMS = [...FILTERS, 'limit'] as const

/** The `metadata.<key>` filters as the form's text: `task=reach site=lab-2`. */
function metadataText(filters: Record<string, string>): string {
  return Object.entries(filters)
    .filter(([name]) => name.startsWith(METADATA_PREFIX))
    .map(([name, value]) => `${name.slice(METADATA_PREFIX.length)}=${/[\s"]/.test(value) && !/^".*"$/.test(value) ? JSON.stringify(value) : value}`)
    .join(' ')
}

/** Query parameters with empty values dropped (a submitted filter form sends every field). */
export function givenParams(query: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''))
}

/** `<root>/portal/episodes?...` keeping the filters, optionally with a cursor. */
function listHref(root: string, filters: Record<string, string>, cursor?: string): string {
  const params = new URLSearchParams()
  for (const name of PAGER_PARAMS) if (filters[name]) params.set(name, filters[name]!)
  for (const [name, value] of Object.entries(filters)) if (name.startsWith(METADATA_PREFIX)) params.set(name, value)
  if (cursor) params.set('cursor', cursor)
  const query = params.toString()
  return `${root}/portal/episodes${query ? `?${query}` : ''}`
}

/** The artifact route, redirecting to a fresh signed URL (the session cookie authenticates it). */
export function artifactHref(root: string, episodeId: string, kind: string): string {
  return `${root}/api/episodes/${episodeId}/artifact/${kind}?redirect=1`
}

export function Status(props: { status: string }) {
  return <span class={`badge s-${props.status}`}>{props.status}</span>
}

/** A filter form's choice among `options`, `any` first. */
export function Select(props: { name: string; label: string; options: readonly string[]; value?: string }) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value=''>any</option>
        {props.options.map((o) => <option key={o} value={o} selected={o === props.value}>{o}</option>)}
      </select>
    </label>
  )
}

function EpisodeList(
  props: { items: Episode[]; next: string | null; filters: Record<string, string>; paged: boolean; error?: string; metadataText?: string },
) {
  const f = props.filters
  const root = useRoot()
  return (
    <Layout title='Episodes' section='episodes' signedIn>
      <h1>Episodes</h1>
      <p class='sub'>Newest first.</p>
      {props.error && <p class='error-box' role='alert' id='filter-error'>{props.error}</p>}
      <form class='filters' method='get' action={`${root}/portal/episodes`}>
        <Select name='source' label='source' options={EpisodeSourceSchema.options} value={f.source} />
        <Select name='status' label='status' options={EpisodeStatusSchema.options} value={f.status} />
        <label>
          robot
          <input name='robot' value={f.robot ?? ''} maxlength={120} />
        </label>
        <label>
          policy version
          <input name='policy_version' value={f.policy_version ?? ''} maxlength={120} />
        </label>
        <label>
          metadata
          <input name='metadata' value={props.metadataText ?? metadataText(f)} placeholder='task=reach site=lab-2' size={24} />
        </label>
        <label>
          created from
          <input name='created_after' value={f.created_after ?? ''} placeholder='2026-05-01' size={12} />
        </label>
        <label>
          created before
          <input name='created_before' value={f.created_before ?? ''} placeholder='2026-06-01' size={12} />
        </label>
        <button type='submit'>Filter</button>
        <a href={`${root}/portal/episodes`}>Clear</a>
      </form>
      {props.items.length === 0 ? <p class='card muted'>No episodes{Object.keys(f).length ? ' match these filters' : ' yet'}.</p> : (
        <div class='scroll'>
          <table class='stack'>
            <thead>
              <tr>
                <th>name</th>
                <th>source</th>
                <th>status</th>
                <th>robot</th>
                <th>policy</th>
                <th class='num'>duration</th>
                <th class='num'>size</th>
                <th>created</th>
              </tr>
            </thead>
            <tbody>
              {props.items.map((e) => (
                <tr>
                  <td class='head'>
                    <a href={`${root}/portal/episodes/${e.episode_id}`}>{e.display_name}</a>
                  </td>
                  <td data-label='source'>{e.source}</td>
                  <td data-label='status'>
                    <Status status={e.status} />
                  </td>
                  <td data-label='robot'>{e.robot ?? NONE}</td>
                  <td data-label='policy'>{e.policy_version ?? NONE}</td>
                  <td class='num' data-label='duration'>{formatDuration(e.duration_s)}</td>
                  <td class='num' data-label='size'>{formatBytes(e.bytes_total)}</td>
                  <td data-label='created'>
                    <time datetime={e.created_at}>{formatTime(e.created_at)}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class='pager' aria-label='pages'>
        {props.paged && <a href={listHref(root, f)}>First page</a>}
        {props.next && <a href={listHref(root, f, props.next)} rel='next'>Next page →</a>}
      </nav>
    </Layout>
  )
}

function EpisodePage(props: { episode: Episode; storage: boolean; deps: Deps; states?: ArtifactState[] }) {
  const root = useRoot()
  const e = props.episode
  const runId = typeof e.metadata.eval_run_id === 'string' && isUuid(e.metadata.eval_run_id) ? e.metadata.eval_run_id : null
  const baselineId = typeof e.metadata.baseline_episode_id === 'string' && isUuid(e.metadata.baseline_episode_id) ? e.metadata.baseline_episode_id : null
  const fields: Array<[string, unknown]> = [
    ['episode_id', <code key='episode_id'>{e.episode_id}</code>],
    ['name', e.name ?? <span key='name' class='muted'>{`not set (shown as ${e.display_name})`}</span>],
    ['source', e.source],
    ['status', <Status key='status' status={e.status} />],
    ['robot', e.robot],
    ['policy_version', e.policy_version],
    ['env_version', e.env_version],
    ['git_sha', e.git_sha === null ? null : <code key='git_sha'>{e.git_sha}</code>],
    ['seed', e.seed === null ? null : String(e.seed)],
    ['fps', e.fps === null ? null : formatNumber(e.fps)],
    ['duration_s', e.duration_s === null ? null : `${formatNumber(e.duration_s)} (${formatDuration(e.duration_s)})`],
    ['bytes_total', e.bytes_total === null ? null : `${e.bytes_total} (${formatBytes(e.bytes_total)})`],
    ['client_id', <code key='client_id'>{e.client_id}</code>],
    ['created_at', <time key='created_at' datetime={e.created_at}>{formatTime(e.created_at)}</time>],
    ['updated_at', <time key='updated_at' datetime={e.updated_at}>{formatTime(e.updated_at)}</time>],
  ]
  return (
    <Layout title={e.display_name} section='episodes' signedIn>
      <h1>{e.display_name}</h1>
      <p class='sub'>
        <Status status={e.status} /> {e.source} episode{e.robot ? ` on ${e.robot}` : ''}
        {runId && (
          <>
            · replay in <a href={`${root}/portal/eval-runs/${runId}`}>eval run</a>
          </>
        )}
        {baselineId && (
          <>
            of <a href={`${root}/portal/episodes/${baselineId}`}>baseline episode</a>
          </>
        )}
        {runId && baselineId && (
          <>
            · <a href={resultHref(root, runId, baselineId)} id='compare-link'>actions beside the baseline's</a>
          </>
        )}
      </p>
      <div class='card'>
        <dl class='fields'>
          {fields.map(([name, value]) => (
            <>
              <dt>{name}</dt>
              <dd>{value === null || value === undefined ? <span class='muted'>{NONE}</span> : (value as string)}</dd>
            </>
          ))}
        </dl>
      </div>
      <Artifacts deps={props.deps} episode={e} states={props.states} />
      <EpisodePlots episode={e} storage={props.storage} video={props.states?.some((state) => state.kind === 'video' && state.present) ?? false} />
      <h2>Metadata</h2>
      <pre class='json' id='metadata' tabindex={0} role='region' aria-label='metadata'>{prettyJson(e.metadata)}</pre>
    </Layout>
  )
}

/** The episodes whose ids start with a short id that is not unique. */
function ShortIdMatches(props: { prefix: string; matches: Array<{ id: string; name: string | null }> }) {
  const root = useRoot()
  return (
    <Layout title={props.prefix} section='episodes' signedIn>
      <h1>{`Episodes starting with ${props.prefix}`}</h1>
      <p class='sub'>The short id is not unique; pick one.</p>
      <ul id='short-id-matches'>
        {props.matches.map((m) => (
          <li>
            <a href={`${root}/portal/episodes/${m.id}`}>
              <code>{m.id}</code>
            </a>
            {m.name ? ` ${m.name}` : ''}
          </li>
        ))}
      </ul>
    </Layout>
  )
}

/** Mounted at `/portal/episodes` behind the session guard. */
export function episodePages(deps: Deps) {
  const app = new Hono<PortalEnv>()
  app.get('/', async (c) => {
    // The form's `metadata` text (`task=reach site=lab-2`) and `metadata.<key>` parameters (as in the API) both filter.
    const { metadata: text, ...given } = givenParams(queryParams(c.req.url))
    let filters: Record<string, string> = given
    try {
      filters = { ...given, ...(text ? metadataParamsFromText(text) : {}) }
      const { filters: metadata, rest } = splitMetadataParams(filters)
      const query = parseWith(ListEpisodesQuery, rest)
      const page = await listEpisodes(deps.db, c.get('clientId'), query, metadata)
      return sendPage(c, 200, <EpisodeList items={page.items} next={page.next_cursor} filters={filters} paged={!!query.cursor} />)
    } catch (error) {
      // A filter value the list refuses: the same page, the form as typed, and what is wrong with which field.
      if (!(error instanceof EpisodicError) || error.code !== 'invalid' || !echoable({ ...filters, text })) throw error
      const page = <EpisodeList items={[]} next={null} filters={filters} paged={false} error={filterError(error.message)} metadataText={text} />
      return sendPage(c, 400, page)
    }
  })
  app.get('/:id', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) {
      // A short id as `episodic replay run` prints it: one match opens it, several are listed.
      const matches = await episodesByShortId(deps.db, c.get('clientId'), id)
      if (matches.length === 1) return c.redirect(`${c.get('root')}/portal/episodes/${matches[0]!.id}`, 302)
      if (matches.length > 1) return sendPage(c, 200, <ShortIdMatches prefix={id} matches={matches} />)
      throw new EpisodicError('not_found', 'episode not found')
    }
    const episode = await getEpisode(deps.db, c.get('clientId'), uuidParam(id, 'episode not found'))
    // One look at the store serves the artifact list and the plots' video cursor.
    const states = deps.storage && episode.artifacts.length > 0
      ? await artifactStates(deps, episode.client_id, episode.episode_id, episode.artifacts)
      : undefined
    return sendPage(c, 200, <EpisodePage episode={episode} storage={deps.storage !== null} deps={deps} states={states} />, PLOT_PAGE_CSP)
  })
  return app
}
