/** @jsxImportSource hono/jsx */
/**
 * The episode page's plots: every key of `sensors.npz` and `actions.npz`
 * over time, drawn in the browser (see `browser.ts`), with the video's time
 * as a cursor when the episode has a video and an `fps`.
 */
import type { Episode } from '../../episodes/ingest-schemas.ts'
import type { ArtifactKind } from '../../storage/types.ts'
import { PlotAssets, PlotSection } from './plot-section.tsx'

const PLOTTED: readonly ArtifactKind[] = ['sensors', 'actions']

/** `video`: the episode's video is in the store (the page shows its player). */
export function EpisodePlots(props: { episode: Episode; storage: boolean; video: boolean }) {
  const e = props.episode
  const kinds = PLOTTED.filter((kind) => e.artifacts.includes(kind))
  return (
    <>
      <h2>Plots</h2>
      {kinds.length === 0
        ? <p class='muted' id='plots-none'>No sensors.npz or actions.npz was requested for this episode, so there is nothing to plot.</p>
        : !props.storage
        ? <p class='muted' id='plots-none'>This deployment has no object storage, so the artifacts cannot be plotted.</p>
        : (
          <>
            <p class='muted'>
              {e.fps === null ? 'The x axis counts steps (the episode has no fps).' : `Time from fps ${e.fps}.`}
              {e.fps !== null && props.video ? ' The video moves a cursor on every plot; click a plot to seek the video.' : ''}
              {' Drag to zoom, double-click to zoom out.'}
            </p>
            {kinds.map((kind) => (
              <PlotSection id={`plots-${kind}`} title={kind === 'sensors' ? 'Sensors' : 'Actions'} sources={[{ episodeId: e.episode_id, kind }]} fps={e.fps} />
            ))}
            <PlotAssets />
          </>
        )}
    </>
  )
}
