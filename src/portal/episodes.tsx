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
import { listEpisodes } from '../episodes/list.ts'
import { EpisodeStatusSchema, ListEpisodesQuery } from '../episodes/schemas.ts'
import { EpisodicError } from '../errors.ts'
import { parseWith } from '../http/body.ts'
import { isUuid } from '../http/fields.ts'
import { getEpisode } from '../ingest/episodes.ts'
import { EpisodeSourceSchema, type Episode } from '../ingest/schemas.ts'
import { ARTIFACT_FILE } from '../storage/types.ts'
import { formatBytes, formatDuration, formatNumber, formatTime, NONE, prettyJson } from './format.ts'
import { Layout, sendPage } from './layout.tsx'
import { useRoot } from './root.ts'
import type { PortalEnv } from './guard.ts'

const FILTERS = ['source', 'status', 'robot', 'policy_version'] as const

/** Query parameters with empty values dropped (a submitted filter form sends every field). */
export function givenParams(query: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''))
}

/** `<root>/portal/episodes?...` keeping the filters, optionally with a cursor. */
function listHref(root: string, filters: Record<string, string>, cursor?: string): string {
  const params = new URLSearchParams()
  for (const name of FILTERS) if (filters[name]) params.set(name, filters[name]!)
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

function Select(props: { name: string; label: string; options: readonly string[]; value?: string }) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="">any</option>
        {props.options.map((o) => (
          <option value={o} selected={o === props.value}>{o}</option>
        ))}
      </select>
    </label>
  )
}

function EpisodeList(props: { items: Episode[]; next: string | null; filters: Record<string, string>; paged: boolean }) {
  const f = props.filters
  const root = useRoot()
  return (
    <Layout title="Episodes" section="episodes" signedIn>
      <h1>Episodes</h1>
      <p class="sub">Newest first.</p>
      <form class="filters" method="get" action={`${root}/portal/episodes`}>
        <Select name="source" label="source" options={EpisodeSourceSchema.options} value={f.source} />
        <Select name="status" label="status" options={EpisodeStatusSchema.options} value={f.status} />
        <label>
          robot
          <input name="robot" value={f.robot ?? ''} maxlength={120} />
        </label>
        <label>
          policy version
          <input name="policy_version" value={f.policy_version ?? ''} maxlength={120} />
        </label>
        <button type="submit">Filter</button>
        <a href={`${root}/portal/episodes`}>Clear</a>
      </form>
      {props.items.length === 0 ? (
        <p class="card muted">No episodes{Object.keys(f).length ? ' match these filters' : ' yet'}.</p>
      ) : (
        <div class="scroll">
          <table class="stack">
            <thead>
              <tr>
                <th>name</th><th>source</th><th>status</th><th>robot</th><th>policy</th>
                <th class="num">duration</th><th class="num">size</th><th>created</th>
              </tr>
            </thead>
            <tbody>
              {props.items.map((e) => (
                <tr>
                  <td class="head"><a href={`${root}/portal/episodes/${e.episode_id}`}>{e.display_name}</a></td>
                  <td data-label="source">{e.source}</td>
                  <td data-label="status"><Status status={e.status} /></td>
                  <td data-label="robot">{e.robot ?? NONE}</td>
                  <td data-label="policy">{e.policy_version ?? NONE}</td>
                  <td class="num" data-label="duration">{formatDuration(e.duration_s)}</td>
                  <td class="num" data-label="size">{formatBytes(e.bytes_total)}</td>
                  <td data-label="created"><time datetime={e.created_at}>{formatTime(e.created_at)}</time></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="pages">
        {props.paged && <a href={listHref(root, f)}>First page</a>}
        {props.next && <a href={listHref(root, f, props.next)} rel="next">Next page →</a>}
      </nav>
    </Layout>
  )
}

function EpisodePage(props: { episode: Episode; storage: boolean }) {
  const root = useRoot()
  const e = props.episode
  const runId = typeof e.metadata.eval_run_id === 'string' && isUuid(e.metadata.eval_run_id) ? e.metadata.eval_run_id : null
  const baselineId = typeof e.metadata.baseline_episode_id === 'string' && isUuid(e.metadata.baseline_episode_id) ? e.metadata.baseline_episode_id : null
  const fields: Array<[string, unknown]> = [
    ['episode_id', <code>{e.episode_id}</code>],
    ['name', e.name ?? <span class="muted">{`not set (shown as ${e.display_name})`}</span>],
    ['source', e.source],
    ['status', <Status status={e.status} />],
    ['robot', e.robot],
    ['policy_version', e.policy_version],
    ['env_version', e.env_version],
    ['git_sha', e.git_sha === null ? null : <code>{e.git_sha}</code>],
    ['seed', e.seed === null ? null : String(e.seed)],
    ['fps', e.fps === null ? null : formatNumber(e.fps)],
    ['duration_s', e.duration_s === null ? null : `${formatNumber(e.duration_s)} (${formatDuration(e.duration_s)})`],
    ['bytes_total', e.bytes_total === null ? null : `${e.bytes_total} (${formatBytes(e.bytes_total)})`],
    ['client_id', <code>{e.client_id}</code>],
    ['created_at', <time datetime={e.created_at}>{formatTime(e.created_at)}</time>],
    ['updated_at', <time datetime={e.updated_at}>{formatTime(e.updated_at)}</time>],
  ]
  return (
    <Layout title={e.display_name} section="episodes" signedIn>
      <h1>{e.display_name}</h1>
      <p class="sub">
        <Status status={e.status} /> {e.source} episode{e.robot ? ` on ${e.robot}` : ''}
        {runId && <> · replay in <a href={`${root}/portal/eval-runs/${runId}`}>eval run</a></>}
        {baselineId && <> of <a href={`${root}/portal/episodes/${baselineId}`}>baseline episode</a></>}
      </p>
      <div class="card">
        <dl class="fields">
          {fields.map(([name, value]) => (
            <>
              <dt>{name}</dt>
              <dd>{value === null || value === undefined ? <span class="muted">{NONE}</span> : (value as string)}</dd>
            </>
          ))}
        </dl>
      </div>
      <h2>Artifacts</h2>
      {e.artifacts.length === 0 ? (
        <p class="muted">None requested (a metadata-only episode).</p>
      ) : !props.storage ? (
        <p class="muted">{`Requested: ${e.artifacts.join(', ')}. This deployment has no object storage, so they cannot be opened.`}</p>
      ) : (
        <>
          <ul class="artifacts">
            {e.artifacts.map((kind) => (
              <li><a href={artifactHref(root, e.episode_id, kind)} class="artifact" data-kind={kind}>{`${kind} (${ARTIFACT_FILE[kind]})`}</a></li>
            ))}
          </ul>
          {e.artifacts.includes('video') && (
            <video controls preload="metadata" src={artifactHref(root, e.episode_id, 'video')}>
              <a href={artifactHref(root, e.episode_id, 'video')}>Download the video</a>
            </video>
          )}
          <p class="muted">Links open a signed URL valid for 15 minutes. Uploads are not verified, so an artifact requested at open may be missing.</p>
        </>
      )}
      <h2>Metadata</h2>
      <pre class="json" id="metadata">{prettyJson(e.metadata)}</pre>
    </Layout>
  )
}

/** Mounted at `/portal/episodes` behind the session guard. */
export function episodePages(deps: Deps) {
  const app = new Hono<PortalEnv>()
  app.get('/', async (c) => {
    const filters = givenParams(c.req.query())
    const query = parseWith(ListEpisodesQuery, filters)
    const page = await listEpisodes(deps.db, c.get('clientId'), query)
    return sendPage(c, 200, <EpisodeList items={page.items} next={page.next_cursor} filters={filters} paged={!!query.cursor} />)
  })
  app.get('/:id', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) throw new EpisodicError('not_found', 'episode not found')
    const episode = await getEpisode(deps.db, c.get('clientId'), id.toLowerCase())
    return sendPage(c, 200, <EpisodePage episode={episode} storage={deps.storage !== null} />)
  })
  return app
}
