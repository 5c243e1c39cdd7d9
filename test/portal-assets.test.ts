/**
 * The portal's browser bundle is a checked-in module of strings
 * (src/portal/assets/plots.generated.ts, served on every runtime without file
 * access): rebuilt here and compared, so a change to src/portal/plots or to
 * the NPZ reader without `npm run build:portal` fails. Also: the handler
 * serves it with the right types, and the episode page allows exactly that
 * script.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { GENERATED, portalAssetsModule } from '../scripts/build-portal-assets.ts'
import { createApp } from '../src/app.ts'
import { PLOTS_JS, UPLOT_CSS } from '../src/portal/assets/plots.generated.ts'
import { openTestDatabase } from './helpers/pglite.ts'

describe('portal assets', () => {
  it('the checked-in bundle is what the sources build to (run `npm run build:portal` after changing them)', async () => {
    expect(readFileSync(GENERATED, 'utf8') === (await portalAssetsModule()), 'src/portal/assets/plots.generated.ts is stale: run npm run build:portal').toBe(
      true,
    )
  }, 60_000)

  it('are served by the handler, from no other origin', async () => {
    const app = createApp({ db: await openTestDatabase(), logger: { error: () => {} } })
    try {
      const js = await app.request('/portal/assets/plots.js')
      expect(js.status).toBe(200)
      expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
      expect(await js.text()).toBe(PLOTS_JS)
      const css = await app.request('/portal/assets/uplot.css')
      expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
      expect(await css.text()).toBe(UPLOT_CSS)
      expect(PLOTS_JS).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z]/i) // fetches nothing by absolute URL (the SVG namespace aside)
    } finally {
      await app.deps.db.destroy()
    }
  })
})
