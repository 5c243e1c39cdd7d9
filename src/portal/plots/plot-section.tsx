/** @jsxImportSource hono/jsx */
/**
 * The server side of the portal's plots: a `<section data-plots>` naming the
 * artifacts to draw, which the portal script (`browser.ts`, served as
 * `/portal/assets/plots.js`) fills in, and the assets a page with plots
 * loads. Pages with plots are sent with `PLOT_PAGE_CSP`: the strict policy
 * plus scripts from the portal itself and downloads of artifacts.
 */
import { ARTIFACT_FILE, type ArtifactKind } from '../../storage/types.ts'
import { CONTENT_SECURITY_POLICY } from '../layout.tsx'
import { useRoot } from '../root.ts'

/**
 * The portal's policy, plus `script-src 'self'` (the one bundled script) and
 * `connect-src` for the artifact route and the object store it redirects to
 * (S3 or R2 on their own origin; the built-in store on ours).
 */
export const PLOT_PAGE_CSP = `${CONTENT_SECURITY_POLICY}; script-src 'self'; connect-src 'self' https: http:`

/** One artifact a plot section draws. */
export interface PlotSource {
  episodeId: string
  kind: ArtifactKind
  /** Legend prefix when the section compares two sources. */
  label?: string
}

/** What the script reads from `data-sources` (see `Source` in browser.ts). */
export function plotSources(root: string, sources: readonly PlotSource[]) {
  return sources.map((s) => ({
    ...(s.label ? { label: s.label } : {}),
    kind: s.kind,
    file: ARTIFACT_FILE[s.kind],
    url: `${root}/api/episodes/${s.episodeId}/artifact/${s.kind}?redirect=1`,
    check: `${root}/api/episodes/${s.episodeId}/artifacts`,
  }))
}

/** A section the script draws charts into; `id` names it for links and tests. */
export function PlotSection(props: { id: string; sources: readonly PlotSource[]; fps: number | null; title?: string }) {
  const root = useRoot()
  return (
    <section
      class='plots'
      id={props.id}
      data-plots=''
      data-state='loading'
      data-fps={props.fps === null ? '' : String(props.fps)}
      data-sources={JSON.stringify(plotSources(root, props.sources))}
    >
      {props.title && <h3>{props.title}</h3>}
      <p class='plot-status muted' role='status'>Loading…</p>
      <noscript>
        <p class='muted'>The plots need JavaScript.</p>
      </noscript>
      <div class='plot-charts'></div>
    </section>
  )
}

/** The stylesheet and script of the plots; once per page, after the sections. */
export function PlotAssets() {
  const root = useRoot()
  return (
    <>
      <link rel='stylesheet' href={`${root}/portal/assets/uplot.css`} />
      <script src={`${root}/portal/assets/plots.js`} defer></script>
    </>
  )
}
