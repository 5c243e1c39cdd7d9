/**
 * `npm run build`: the npm package. One ESM file and one .d.ts per subpath
 * export of package.json (shared code in chunks), and the `episodic` bin
 * (dist/cli.js; src/cli/main.ts keeps its `#!/usr/bin/env node` line).
 * Dependencies stay imports, so each runtime resolves them its own way
 * (postgres.js, for one, has a `workerd` build that wrangler picks).
 */
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
  dts: { entry: ENTRIES },
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
  // pythonPolicy finds its bridge beside the bundle (new URL('./episodic_bridge.py', import.meta.url)).
  onSuccess: 'cp src/replay/python/episodic_bridge.py dist/episodic_bridge.py',
})
