import { describe, expect, it } from 'vitest'
import { firstStartBanner, verbCommand } from './serve.ts'

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
