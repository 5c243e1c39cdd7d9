/**
 * The portal's one script (bundled with uPlot and the project's NPZ reader
 * into `assets/plots.generated.ts`, served at `/portal/assets/plots.js`).
 * It finds each `<section data-plots>` the server rendered, downloads the
 * `.npz` artifacts its `data-sources` name (through the artifact route, which
 * redirects to a signed URL), decodes them in the browser and draws one uPlot
 * chart per key, a line per component, min/max-downsampled per pixel (again
 * on zoom). With a `<video data-plot-video>` on the page and a known `fps`,
 * the video's time moves a cursor on every chart and a click on a chart
 * seeks the video.
 *
 * State for people and tests lives in attributes: the section's
 * `data-state` (`loading`, `ready`, `missing`, `error`) and `data-render-ms`
 * (decode + downsample + draw), and per chart `data-key`, `data-steps`,
 * `data-components`, `data-points` (x values drawn) and `data-cursor-time`.
 */
import uPlot from 'uplot'
import { readNpz } from '../../replay/npz/read.ts'
import type { NdArray } from '../../replay/npz/types.ts'
import { type KeyColumns, keyColumns } from './columns.ts'
import { downsample, visibleSteps } from './downsample.ts'

/** One artifact a section plots (see `PlotSection` in `plot-section.tsx`). */
interface Source {
  /** Legend prefix when a section compares sources (`baseline`, `candidate`). */
  label?: string
  /** Artifact route with `?redirect=1`. */
  url: string
  /** File name shown in messages, e.g. `actions.npz`. */
  file: string
  /** `GET /api/episodes/{id}/artifacts`, asked first whether the object exists. */
  check?: string
  kind: string
}

type Loaded = { arrays: Record<string, NdArray>; decodeMs: number } | { missing: string } | { error: string }

const COLORS = ['#2457c5', '#d9480f', '#2b8a3e', '#ae3ec9', '#e8590c', '#1098ad', '#c2255c', '#5c940d', '#364fc7', '#a61e4d']
const HEIGHT = 220

for (const section of Array.from(document.querySelectorAll<HTMLElement>('section[data-plots]'))) {
  void drawSection(section).catch((err) => show(section, 'error', `The plots could not be drawn: ${err instanceof Error ? err.message : String(err)}`))
}

function show(section: HTMLElement, state: string, message: string): void {
  section.dataset.state = state
  const status = section.querySelector<HTMLElement>('.plot-status')
  if (status) {
    status.textContent = message
    status.hidden = message === ''
  }
}

async function drawSection(section: HTMLElement): Promise<void> {
  const sources = JSON.parse(section.dataset.sources ?? '[]') as Source[]
  const fps = Number(section.dataset.fps) > 0 ? Number(section.dataset.fps) : null
  show(section, 'loading', `Loading ${sources.map((s) => s.file).join(' and ')}…`)
  const loaded = await Promise.all(sources.map(load))
  const problems = loaded.flatMap((l, i) =>
    ('missing' in l ? [l.missing] : 'error' in l ? [l.error] : []).map((m) => `${sources[i]!.label ? `${sources[i]!.label}: ` : ''}${m}`)
  )
  if (problems.length === loaded.length || loaded.some((l) => 'error' in l)) {
    show(section, loaded.some((l) => 'error' in l) ? 'error' : 'missing', problems.join(' '))
    return
  }
  const started = performance.now()
  const present = loaded.flatMap((l, i) => ('arrays' in l ? [{ label: sources[i]!.label, arrays: l.arrays }] : []))
  const keys = keyColumns(present)
  if (keys.length === 0) {
    show(section, 'ready', 'The archive holds no per-step arrays to plot.')
    return
  }
  const charts = section.querySelector<HTMLElement>('.plot-charts') ?? section
  const width = Math.max(320, charts.clientWidth || section.clientWidth || 800)
  const drawn = keys.map((k) => drawKey(charts, k, fps, width, present.length > 1))
  const video = fps ? document.querySelector<HTMLVideoElement>('video[data-plot-video]') : null
  if (video) followVideo(video, drawn)
  const decodeMs = loaded.reduce((sum, l) => sum + ('decodeMs' in l ? l.decodeMs : 0), 0)
  section.dataset.renderMs = (decodeMs + performance.now() - started).toFixed(1)
  show(section, 'ready', problems.join(' '))
}

/** Downloads and decodes one source; a missing object says so instead of failing. */
async function load(source: Source): Promise<Loaded> {
  const missing = { missing: `${source.file} was requested but never uploaded (missing).` }
  if (source.check) {
    try {
      const reply = await fetch(source.check, { credentials: 'same-origin' })
      if (reply.ok) {
        const body = (await reply.json()) as { artifacts?: Array<{ kind: string; present?: boolean }> }
        if (body.artifacts?.find((a) => a.kind === source.kind)?.present === false) return missing
      }
    } catch {
      // The check is an optimisation; the download below decides.
    }
  }
  let reply: Response
  try {
    reply = await fetch(source.url, { credentials: 'same-origin' })
  } catch {
    return {
      error: `${source.file} could not be fetched (network error; an object store on another origin needs a CORS rule for this site, see docs/portal.md).`,
    }
  }
  if (reply.status === 404) return missing
  if (!reply.ok) return { error: `${source.file} could not be loaded (HTTP ${reply.status}).` }
  try {
    const bytes = new Uint8Array(await reply.arrayBuffer())
    const started = performance.now()
    const arrays = readNpz(bytes, { inPlace: true })
    return { arrays, decodeMs: performance.now() - started }
  } catch (err) {
    return { error: `${source.file} could not be read as an .npz archive: ${err instanceof Error ? err.message : String(err)}` }
  }
}

interface Drawn {
  plot: uPlot
  figure: HTMLElement
}

function drawKey(parent: HTMLElement, key: KeyColumns, fps: number | null, width: number, compare: boolean): Drawn {
  const figure = document.createElement('figure')
  figure.className = 'plot'
  figure.dataset.key = key.key
  figure.dataset.steps = String(key.steps)
  figure.dataset.components = String(key.components)
  const caption = document.createElement('figcaption')
  caption.textContent = `${key.key} · ${key.steps} steps × ${key.components} component${key.components === 1 ? '' : 's'}`
  figure.append(caption)
  parent.append(figure)

  const time = fps ? (i: number) => i / fps : (i: number) => i
  const values = key.columns.map((c) => c.values)
  const buckets = () => Math.max(16, Math.round(width - 60))
  const full: [number, number] = [time(0), time(Math.max(0, key.steps - 1))]
  let range: [number, number] = [0, key.steps]
  let zooming = false
  const data = downsample(values, time, 0, key.steps, buckets())
  figure.dataset.points = String(data[0].length)
  const componentOf = (i: number) => (compare ? Math.floor(i / 2) : i)
  // Axis text and grid in the page's colours (a canvas cannot read CSS variables).
  const ink = getComputedStyle(figure).color
  const grid = { stroke: 'rgba(128, 128, 128, 0.25)', width: 1 }
  const plot = new uPlot(
    {
      width,
      height: HEIGHT,
      scales: { x: { time: false } },
      axes: [
        { label: fps ? 'time (s)' : 'step', size: 40, stroke: ink, grid, ticks: grid },
        { size: 60, stroke: ink, grid, ticks: grid },
      ],
      series: [
        { label: fps ? 't (s)' : 'step', value: (_u, v) => (v === null ? '—' : fps ? v.toFixed(3) : String(v)) },
        ...key.columns.map((c, i) => ({
          label: c.label,
          stroke: COLORS[componentOf(i) % COLORS.length],
          width: 1,
          dash: compare && c.source === 0 ? [5, 4] : undefined,
          points: { show: false },
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : String(Number(v.toPrecision(6)))),
        })),
      ],
      legend: { live: true },
      // One sync key per page: hovering any chart shows the same moment on every chart.
      cursor: { drag: { x: true, y: false }, points: { show: false }, sync: { key: 'episodic-plots' } },
      hooks: {
        setScale: [
          (u, scale) => {
            if (scale !== 'x' || zooming) return
            const min = u.scales.x!.min
            const max = u.scales.x!.max
            if (min == null || max == null) return
            const next = visibleSteps(key.steps, time, min, max)
            if (next[0] === range[0] && next[1] === range[1]) return
            range = next
            zooming = true
            const zoomed = downsample(values, time, next[0], next[1], buckets())
            u.setData(zoomed, false)
            figure.dataset.points = String(zoomed[0].length)
            zooming = false
          },
        ],
        setCursor: [
          (u) => {
            const left = u.cursor.left
            if (left !== undefined && left >= 0) figure.dataset.cursorTime = String(u.posToVal(left, 'x'))
          },
        ],
      },
    },
    data,
    figure,
  )
  // Double-click zooms back out to the whole episode (uPlot alone would fit the zoomed data).
  plot.over.addEventListener('dblclick', () => plot.setScale('x', { min: full[0], max: full[1] }))
  return { plot, figure }
}

/** The video's time as a cursor on every chart; a click on a chart seeks the video there. */
function followVideo(video: HTMLVideoElement, drawn: Drawn[]): void {
  const place = () => {
    const t = video.currentTime
    for (const { plot, figure } of drawn) {
      const min = plot.scales.x!.min ?? 0
      const max = plot.scales.x!.max ?? 0
      if (t < min || t > max) continue
      plot.setCursor({ left: plot.valToPos(t, 'x'), top: plot.over.clientHeight / 2 })
      figure.dataset.cursorTime = String(t)
    }
  }
  let frame = 0
  const loop = () => {
    place()
    frame = video.paused ? 0 : requestAnimationFrame(loop)
  }
  video.addEventListener('timeupdate', place)
  video.addEventListener('seeked', place)
  video.addEventListener('play', () => {
    if (!frame) frame = requestAnimationFrame(loop)
  })
  for (const { plot } of drawn) {
    let downAt = -1
    plot.over.addEventListener('mousedown', (e) => (downAt = e.clientX))
    plot.over.addEventListener('click', (e) => {
      if (Math.abs(e.clientX - downAt) > 3) return // a drag zooms; only a click seeks
      const left = plot.cursor.left
      if (left === undefined || left < 0) return
      const t = plot.posToVal(left, 'x')
      video.currentTime = Math.max(0, Number.isFinite(video.duration) ? Math.min(video.duration, t) : t)
    })
  }
}
