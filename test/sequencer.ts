/**
 * Test file order for `vitest run`: the files that take longest start first,
 * so that no long file starts late and runs alone at the end. Vitest orders
 * by the durations it cached in earlier runs, but a clean clone (CI) has no
 * cache and gets the files by size, which starts the small files that drive
 * long suites (test/runtimes/*.test.ts) last. The list is the slowest files
 * of a clean-clone run, slowest first; the rest keep Vitest's order.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node'

const SLOWEST_FIRST = [
  'test/runtimes/npm-package.test.ts',
  'test/replay-policies.test.ts',
  'test/webhooks.test.ts',
  'test/examples.test.ts',
  'test/cli.test.ts',
  'test/reliability/cli-serve.test.ts',
  'test/python-bridge-frames.test.ts',
  'test/conformance/uploads.test.ts',
  'test/runtimes/jsr-package.test.ts',
  'test/runtimes/workers.test.ts',
  'test/cli-webhooks.test.ts',
  'test/cli-upload.test.ts',
  'test/reliability/postgres-faults.test.ts',
  'test/reliability/postgres-frozen.test.ts',
  'test/browser/plots.test.ts',
  'test/browser/portal.test.ts',
  'test/browser/replay-detail.test.ts',
  'test/reliability/cli-exit-codes.test.ts',
  'test/conformance/ingest-config.test.ts',
  'test/postgres-outage.test.ts',
  'test/cli-upload-actions.test.ts',
  'test/browser/trends.test.ts',
  'test/reliability/http.test.ts',
  'test/cli-replay.test.ts',
  'test/npz-numpy.test.ts',
  'test/conformance/in-process.test.ts',
  'test/runtimes/node.test.ts',
  'test/runtimes/deno.test.ts',
  'test/runtimes/bun.test.ts',
]

export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = SLOWEST_FIRST.findIndex((path) => file.moduleId.endsWith(`/${path}`))
      return index < 0 ? SLOWEST_FIRST.length : index
    }
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}
