/**
 * `npm run build`: the npm package. One ESM file per subpath export of
 * package.json (shared code in chunks), and the `episodic` bin (dist/cli.js;
 * src/cli/main.ts keeps its `#!/usr/bin/env node` line). Declarations come
 * from `tsc -p tsconfig.build.json` (one .d.ts per source file under
 * dist/types/, 13 s where tsup's bundled .d.ts took 40 s); this config writes
 * the .d.ts of each subpath export, which re-exports its entry's.
 * Dependencies stay imports, so each runtime resolves them its own way
 * (postgres.js, for one, has a `workerd` build that wrangler picks).
 */
import { copyFileSync, writeFileSync } from 'node:fs'
import { defineConfig } from 'tsup'

/** dist name -> source, one per subpath export; test/packages checks package.json, jsr.json and deno.json against it. */
export const ENTRIES: Record<string, string> = {
  index: 'src/index.ts',
  client: 'src/client/index.ts',
  replay: 'src/replay/index.ts',
  node: 'adapters/node/index.ts',
  deno: 'adapters/deno/index.ts',
  bun: 'adapters/bun/index.ts',
  workers: 'adapters/workers/index.ts',
}

export default defineConfig({
  entry: { ...ENTRIES, cli: 'src/cli/main.ts' },
  format: 'esm',
  target: 'node20',
  platform: 'node',
  splitting: true,
  // Deno refuses bare built-in names (`crypto`); every runtime takes `node:crypto`.
  removeNodeProtocol: false,
  // No source maps: they would point at src/, which the package does not ship.
  sourcemap: false,
  clean: true,
  outDir: 'dist',
  // Loaded only for TypeScript policy modules (`episodic replay run --policy x.ts`).
  external: ['tsx'],
  onSuccess: async () => {
    // pythonPolicy finds its bridge beside the bundle (new URL('./episodic_bridge.py', import.meta.url)).
    copyFileSync('src/replay/python/episodic_bridge.py', 'dist/episodic_bridge.py')
    for (const [name, source] of Object.entries(ENTRIES)) {
      writeFileSync(`dist/${name}.d.ts`, `export * from './types/${source.replace(/\.ts$/, '.js')}'\n`)
    }
  },
})
