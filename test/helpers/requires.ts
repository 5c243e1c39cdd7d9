/**
 * `describe` for a suite that needs something outside npm (Chromium, numpy,
 * PostgreSQL's binaries, Python modules): it runs when `missing` is null;
 * otherwise it is skipped with a loud `*** SKIPPED ***` line, except under
 * `CI=true`, where it fails with `missing` (what is absent and how to get it).
 */
import { describe, it } from 'vitest'

export function describeRequiring(name: string, missing: string | null, body: () => void, options: { timeout?: number } = {}): void {
  if (missing === null) {
    describe(name, options, body)
    return
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs what is missing (CI=true forbids skipping)', () => {
        throw new Error(missing)
      })
    })
    return
  }
  console.warn(`\n*** SKIPPED: ${missing}; "${name}" did not run ***\n`)
  describe.skip(name, body)
}
