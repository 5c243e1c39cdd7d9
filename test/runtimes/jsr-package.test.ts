/**
 * The JSR package: `deno publish --dry-run` (Deno from npm) refuses "slow
 * types" (public symbols without explicit types) and files it cannot
 * publish, exactly as publishing would; one `deno check` type-checks every
 * exported module together with the Deno example, which the root tsconfig
 * leaves out (it uses the `Deno` global). Publishing would type-check the
 * same modules again, so the dry run skips that (`--no-check`): one type
 * check instead of two, 14 s against 37 s with an empty Deno cache. The
 * limits are for hangs.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { binary, ROOT } from './harness.ts'

function deno(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(binary('deno'), args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 580_000 })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

describe('JSR package', () => {
  it('passes deno publish --dry-run (no slow types)', () => {
    const { status, output } = deno(['publish', '--dry-run', '--allow-dirty', '--no-check'])
    expect(output, output).toContain('Dry run complete')
    expect(status, output).toBe(0)
    expect(output).not.toMatch(/missing-explicit|error\[/)
    // The Python bridge ships; test helpers (reference_values.py) do not.
    expect(output).toContain('episodic_bridge.py')
    expect(output).not.toMatch(/\.test\.ts|reference_values\.py/)
  }, 600_000)

  it('type-checks every exported module and examples/deno with Deno', () => {
    const exports: Record<string, string> = JSON.parse(readFileSync(join(ROOT, 'deno.json'), 'utf8')).exports
    const { status, output } = deno(['check', ...Object.values(exports), 'examples/deno/server.ts'])
    expect(status, output).toBe(0)
  }, 600_000)
})
