/**
 * The episode page's plots in Chromium: a 100,000-step episode with 30
 * float32 components (12 MB `sensors.npz`), decoded in the browser, min/max
 * downsampled per pixel and drawn with uPlot; the page reports
 * `data-render-ms` (decode + downsample + draw). The reference, loaded in
 * turn with it: a 1,000-step episode of the same 30 components, which fits
 * the chart's width without downsampling.
 *
 *   npx tsx bench/portal-plots.ts            (or: npm run bench -- portal-plots)
 *
 * Needs Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium).
 * Target: decode + downsample + draw under 1 s. Knobs: PLOTS_ROUNDS (6),
 * PLOTS_STEPS (100000), PLOTS_COMPONENTS (30).
 */
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { EpisodicClient } from '../src/client/client.ts'
import { writeNpz } from '../src/replay/npz/index.ts'
import { startService } from '../test/helpers/service.ts'
import { CHROMIUM_PATH, launchChromium, signIn } from '../test/browser/chromium.ts'
import { median } from './lib.ts'

const ROUNDS = Number(process.env.PLOTS_ROUNDS ?? 6)
const STEPS = Number(process.env.PLOTS_STEPS ?? 100_000)
const COMPONENTS = Number(process.env.PLOTS_COMPONENTS ?? 30)
const TARGET_MS = 1000
/** Fits the chart's width (about 1,100 pixels) without downsampling. */
const SMALL_STEPS = 1000

/** A random walk per component, as joint positions look: every pixel column has a real min and max. */
function randomWalk(steps: number, components: number): Float32Array {
  const data = new Float32Array(steps * components)
  let seed = 7
  const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5
  for (let c = 0; c < components; c++) data[c] = next()
  for (let i = components; i < data.length; i++) data[i] = data[i - components]! + next()
  return data
}

export async function main(): Promise<void> {
  if (!existsSync(CHROMIUM_PATH)) {
    console.log(`SKIPPED: Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)`)
    return
  }
  const svc = await startService('pglite')
  const browser = await launchChromium()
  try {
    const { key } = await svc.newTenant('plots')
    const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
    const episode = async (steps: number) => {
      const sensors = writeNpz({ joints: { dtype: 'float32', shape: [steps, COMPONENTS], data: randomWalk(steps, COMPONENTS) } })
      const opened = await client.openEpisode({ name: `walk-${steps}`, fps: 100, request_uploads: ['sensors'] })
      for (const entry of opened.upload_urls) await client.upload(entry, sensors)
      await client.finalizeEpisode(opened.episode_id, { status: 'ready' })
      return { path: `/portal/episodes/${opened.episode_id}`, bytes: sensors.length }
    }
    const big = await episode(STEPS)
    const small = await episode(SMALL_STEPS)

    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
    context.setDefaultTimeout(120_000)
    const page = await context.newPage()
    await signIn(page, svc.url, key, small.path)
    /** Loads the page and returns its decode + downsample + draw time and the x values drawn per chart. */
    const draw = async (path: string) => {
      await page.goto(`${svc.url}${path}`)
      await page.waitForSelector('#plots-sensors[data-state=ready]')
      return {
        ms: Number(await page.getAttribute('#plots-sensors', 'data-render-ms')),
        points: Number(await page.getAttribute('figure.plot', 'data-points')),
      }
    }
    console.log(
      `${STEPS.toLocaleString('en-US')} steps x ${COMPONENTS} components (${(big.bytes / 1e6).toFixed(1)} MB float32 .npz) against ${
        SMALL_STEPS.toLocaleString('en-US')
      } steps, ${ROUNDS} page loads each, interleaved; load ${loadavg()[0]!.toFixed(1)}`,
    )
    await draw(big.path) // warms the browser's caches and JIT
    const times = { big: [] as number[], small: [] as number[] }
    let points = { big: 0, small: 0 }
    for (let round = 0; round < ROUNDS; round++) {
      const b = await draw(big.path)
      const s = await draw(small.path)
      times.big.push(b.ms)
      times.small.push(s.ms)
      points = { big: b.points, small: s.points }
    }
    const b = median(times.big)
    const s = median(times.small)
    console.log(`${SMALL_STEPS.toLocaleString('en-US').padStart(7)} steps (reference) ${s.toFixed(1).padStart(8)} ms  ${points.small} x values per chart`)
    console.log(
      `${STEPS.toLocaleString('en-US').padStart(7)} steps             ${b.toFixed(1).padStart(8)} ms  ${points.big} x values per chart; ${
        (b / s).toFixed(2)
      }x the reference; target < ${TARGET_MS} ms: ${b < TARGET_MS ? 'met' : 'not met'}`,
    )
    console.log(
      `(medians of decode + downsample + draw; each load: ${times.big.map((v) => v.toFixed(0)).join(' ')} / ${
        times.small.map((v) => v.toFixed(0)).join(' ')
      } ms)`,
    )
  } finally {
    await browser.close()
    await svc.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
