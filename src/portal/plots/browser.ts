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
import { type KeyColumns, keyColumns, MAX_PLOT_COMPONENTS } from './columns.ts'
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

/**
 * One line colour per component, told apart by hue and at least 3:1 against
 * the chart's background in each colour scheme (WCAG's minimum for graphics).
 */
const COLORS = matchMedia('(prefers-color-scheme: dark)').matches
  ? ['#6cb4ee', '#ff8a65', '#5fd38d', '#c39bd3', '#ffc857', '#4dd0e1', '#f48fb1', '#d7a98c', '#b0bec5', '#aed581']
  : ['#0b62a4', '#c23b22', '#1a7f37', '#8e44ad', '#a15c00', '#00838f', '#b8336a', '#6d4c41', '#5c6b7a', '#4d7c0f']
const HEIGHT = 220
/** Narrowest chart drawn: a phone at 320 CSS pixels, less the page's padding. */
const MIN_WIDTH = 200

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
  const widthOf = () => Math.max(MIN_WIDTH, charts.clientWidth || section.clientWidth || 800)
  for (const k of keys.filter((k) => k.omitted)) charts.append(omittedNote(k))
  const drawn = keys.filter((k) => !k.omitted).map((k) => drawKey(charts, k, fps, widthOf(), present.length > 1))
  // The charts follow their box: a rotated phone, a resized window, a zoomed page.
  let drawnWidth = widthOf()
  new ResizeObserver(() => {
    const width = widthOf()
    if (width === drawnWidth) return
    drawnWidth = width
    for (const d of drawn) d.resize(width)
  }).observe(charts)
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
  /** Draws the chart at a new width, downsampled again for it. */
  resize(width: number): void
}

function drawKey(parent: HTMLElement, key: KeyColumns, fps: number | null, initialWidth: number, compare: boolean): Drawn {
  let width = initialWidth
  const figure = keyFigure(
    key,
    'plot',
    `${key.key} · ${key.steps} steps × ${key.components} component${key.components === 1 ? '' : 's'}${compare ? ' · dashed: baseline, solid: candidate' : ''}`,
  )
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
      // A dashed series (the baseline, when sources are compared) gets a dashed marker too.
      legend: { live: true, markers: { dash: (u: uPlot, i: number) => (u.series[i]!.dash ? 'dashed' : 'solid') } },
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
  readableByKeyboard(plot, key.key)
  figure.append(summaryTable(key))
  return {
    plot,
    figure,
    resize(next) {
      width = next
      plot.setSize({ width, height: HEIGHT })
      const resampled = downsample(values, time, range[0], range[1], buckets())
      plot.setData(resampled, false)
      figure.dataset.points = String(resampled[0].length)
    },
  }
}

/** A key too wide to plot (a camera image): its shape, said instead of drawn. */
function omittedNote(key: KeyColumns): HTMLElement {
  const shape = key.omitted!.join('×')
  return keyFigure(
    key,
    'plot omitted',
    `${key.key} · ${key.steps} steps × ${shape} per step: an image or grid, not plotted (more than ${MAX_PLOT_COMPONENTS} values per step)`,
  )
}

/** The figure of one key, with the data attributes tests and people read, and its caption. */
function keyFigure(key: KeyColumns, className: string, caption: string): HTMLElement {
  const figure = document.createElement('figure')
  figure.className = className
  figure.dataset.key = key.key
  figure.dataset.steps = String(key.steps)
  figure.dataset.components = String(key.components)
  const figcaption = document.createElement('figcaption')
  figcaption.textContent = caption
  figure.append(figcaption)
  return figure
}

/**
 * The chart from the keyboard: it takes focus, and the arrow keys move the
 * cursor (Shift: ten times as far; Home and End: the ends), so the live
 * legend reads the values there; Escape zooms out.
 */
function readableByKeyboard(plot: uPlot, key: string): void {
  const over = plot.over
  over.tabIndex = 0
  over.setAttribute('role', 'img')
  over.setAttribute('aria-label', `${key}: arrow keys move the cursor and the legend shows the values there; the table below sums each component up`)
  // Moves go by drawn point (the cursor snaps to points): one per press, or about 1% of them.
  const to = (index: number) => {
    const xs = plot.data[0]
    const i = Math.max(0, Math.min(xs.length - 1, index))
    plot.setCursor({ left: plot.valToPos(xs[i]!, 'x'), top: over.clientHeight / 2 })
  }
  over.addEventListener('focus', () => {
    if (plot.cursor.idx == null) to(0)
  })
  over.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      plot.setScale('x', { min: plot.data[0][0] ?? 0, max: plot.data[0].at(-1) ?? 0 })
      return
    }
    const at = plot.cursor.idx ?? 0
    const stride = Math.max(1, Math.round(plot.data[0].length / 100)) * (e.shiftKey ? 10 : 1)
    const moves: Record<string, number> = { ArrowRight: at + stride, ArrowLeft: at - stride, Home: 0, End: plot.data[0].length - 1 }
    if (!(e.key in moves)) return
    e.preventDefault()
    to(moves[e.key]!)
  })
}

/** Each component's first, last, lowest, highest and mean value over the whole episode, in a table under the chart. */
function summaryTable(key: KeyColumns): HTMLElement {
  const details = document.createElement('details')
  details.className = 'plot-summary'
  const summary = document.createElement('summary')
  summary.textContent = 'Values as a table'
  const table = document.createElement('table')
  const head = table.createTHead().insertRow()
  for (const name of ['component', 'first', 'last', 'min', 'max', 'mean']) {
    const th = document.createElement('th')
    th.textContent = name
    head.append(th)
  }
  const body = table.createTBody()
  const text = (v: number) => (Number.isFinite(v) ? String(Number(v.toPrecision(6))) : '—')
  for (const column of key.columns) {
    const values = column.values
    let min = Infinity, max = -Infinity, sum = 0, n = 0
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!
      if (!Number.isFinite(v)) continue
      if (v < min) min = v
      if (v > max) max = v
      sum += v
      n++
    }
    const row = body.insertRow()
    for (const cell of [column.label, text(values[0] ?? NaN), text(values[values.length - 1] ?? NaN), text(min), text(max), text(n ? sum / n : NaN)]) {
      row.insertCell().textContent = cell
    }
  }
  details.append(summary, table)
  return details
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
