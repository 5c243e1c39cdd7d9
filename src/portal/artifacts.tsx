/** @jsxImportSource hono/jsx */
/**
 * The artifact section of the episode page: each requested artifact as
 * present (with its size, linked through the artifact route) or missing,
 * from a HEAD on the store (`artifactStates`). The video player appears only
 * when the video is actually there, so a missing upload never shows a
 * broken player.
 */
import type { Deps } from '../context.ts'
import { artifactStates } from '../episodes/artifacts.ts'
import type { Episode } from '../episodes/ingest-schemas.ts'
import type { ArtifactState } from '../episodes/upload-schemas.ts'
import { ARTIFACT_FILE } from '../storage/types.ts'
import { artifactHref as href } from './episodes.tsx'
import { formatBytes } from './format.ts'
import { useRoot } from './root.ts'

/**
 * `<h2>Artifacts</h2>` and the list, for one episode of the signed-in client.
 *
 * @example
 * <Artifacts deps={deps} episode={episode} />
 */
export async function Artifacts(props: { deps: Pick<Deps, 'storage'>; episode: Episode; states?: ArtifactState[] }) {
  // Read before the first await: the root comes from the page's context.
  const root = useRoot()
  const e = props.episode
  if (e.artifacts.length === 0) {
    return (
      <>
        <h2>Artifacts</h2>
        <p class='muted'>None requested (a metadata-only episode).</p>
      </>
    )
  }
  if (!props.deps.storage) {
    return (
      <>
        <h2>Artifacts</h2>
        <p class='muted'>{`Requested: ${e.artifacts.join(', ')}. This deployment has no object storage, so they cannot be opened.`}</p>
      </>
    )
  }
  const states = (props.states ?? await artifactStates(props.deps, e.client_id, e.episode_id, e.artifacts)).filter((state) => state.requested || state.present)
  const video = states.find((state) => state.kind === 'video' && state.present)
  return (
    <>
      <h2>Artifacts</h2>
      <ul class='artifacts'>
        {states.map((state) => <ArtifactItem key={state.kind} root={root} episodeId={e.episode_id} state={state} />)}
      </ul>
      {video && (
        <video controls preload='metadata' src={href(root, e.episode_id, 'video')} data-plot-video=''>
          <a href={href(root, e.episode_id, 'video')}>Download the video</a>
        </video>
      )}
      <p class='muted'>Checked against the object store just now. Links open a signed URL valid for 15 minutes.</p>
    </>
  )
}

function ArtifactItem(props: { root: string; episodeId: string; state: ArtifactState }) {
  const { state } = props
  const label = `${state.kind} (${ARTIFACT_FILE[state.kind]})`
  if (!state.present) {
    return (
      <li class='artifact-missing' data-kind={state.kind} data-present='false'>
        {label} <span class='muted'>missing: never uploaded, or the upload did not finish</span>
      </li>
    )
  }
  return (
    <li data-kind={state.kind} data-present='true'>
      <a href={href(props.root, props.episodeId, state.kind)} class='artifact' data-kind={state.kind}>{label}</a>{' '}
      <span class='muted'>{formatBytes(state.size)}</span>
    </li>
  )
}
