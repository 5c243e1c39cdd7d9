import { describe, expect, it } from 'vitest'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import type { EpisodicApp } from '../app.ts'
import { withIO } from './io.ts'
import { bootstrap, firstStartBanner, verbCommand } from './serve.ts'

describe('the first start banner', () => {
  it('names a command that runs where the server runs: npm run in a clone, npx where the package is installed', () => {
    // `npm start` in a clone runs src/cli/serve.ts through tsx; npx finds no `episodic` bin there.
    expect(verbCommand('file:///home/ada/episodic/src/cli/serve.ts')).toBe('npm run episodic --')
    expect(firstStartBanner('epk_a_b', 'http://127.0.0.1:8787')).toContain('More keys: npm run episodic -- keys create --client default\n')
    // The published bin is the bundle under dist/.
    const installed = 'file:///srv/app/node_modules/episodic/dist/cli.js'
    expect(verbCommand(installed)).toBe('npx episodic')
    expect(firstStartBanner('epk_a_b', 'http://127.0.0.1:8787', installed)).toContain('More keys: npx episodic keys create --client default\n')
  })

  it('prints the key, a curl line for this address and the portal', () => {
    const banner = firstStartBanner('epk_a_b', 'http://127.0.0.1:9999')
    expect(banner).toContain('export EPISODIC_API_KEY=epk_a_b\n')
    expect(banner).toContain('curl -s -X POST http://127.0.0.1:9999/api/ingest/episode \\\n    -H "Authorization: Bearer epk_a_b"')
    expect(banner).toContain('The portal (sign in with the same key): http://127.0.0.1:9999/portal\n')
  })
})

describe('the first start', () => {
  it('of several instances at once on one empty database: one mints the key, none fails', async () => {
    const db = await openTestDatabase()
    try {
      let stdout = ''
      const io = { env: {}, cwd: '.', stdout: (text: string) => (stdout += text), stderr: () => {} }
      const app = { deps: { db, sha256: NodeSha256 } } as unknown as Pick<EpisodicApp, 'deps'>
      // Both look for a client before either inserts one.
      await withIO(io, () => Promise.all([bootstrap(app, 'http://a'), bootstrap(app, 'http://b')]))
      expect(stdout.match(/First start: created client "default"/g)).toHaveLength(1)
      expect(await db.selectFrom('clients').select('name').execute()).toEqual([{ name: 'default' }])
      expect(await db.selectFrom('api_keys').select('key_id').execute()).toHaveLength(1)
    } finally {
      await db.destroy()
    }
  })
})
