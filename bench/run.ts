export {}
/**
 * `npm run bench`: every benchmark in turn, each printing its figure next to a
 * reference measured in the same run. `npm run bench -- ingest` runs one.
 */
const BENCHES: Record<string, () => Promise<{ main(): Promise<unknown> }>> = {
  ingest: () => import('./ingest.ts'),
  presign: () => import('./presign.ts'),
  dialect: () => import('./dialect.ts'),
  rollup: () => import('./rollup.ts'),
  replay: () => import('./replay.ts'),
  'replay-e2e': () => import('./replay-e2e.ts'),
  runtimes: () => import('./runtimes.ts'),
  upload: () => import('./upload.ts'),
  search: () => import('./search.ts'),
  'portal-plots': () => import('./portal-plots.ts'),
}

const only = process.argv.slice(2)
for (const [name, load] of Object.entries(BENCHES)) {
  if (only.length && !only.includes(name)) continue
  console.log(`\n=== bench/${name} ===`)
  await (await load()).main()
}
