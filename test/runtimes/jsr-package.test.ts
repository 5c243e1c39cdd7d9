/**
 * The JSR package: `deno publish --dry-run` (Deno from npm) type-checks every
 * exported module and refuses "slow types" (public symbols without explicit
 * types), exactly as publishing would. Also type-checks the Deno example,
 * which the root tsconfig leaves out (it uses the `Deno` global). ~10-20 s each
 * on an idle machine, minutes on a busy one: the limits are for hangs.
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { binary, ROOT } from './harness.ts'

function deno(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(binary('deno'), args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 580_000 })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

describe('JSR package', () => {
  it('passes deno publish --dry-run (type check, no slow types)', () => {
    const { status, output } = deno(['publish', '--dry-run', '--allow-dirty'])
    expect(output, output).toContain('Dry run complete')
    expect(status, output).toBe(0)
    expect(output).not.toMatch(/missing-explicit|error\[/)
  }, 600_000)

  it('type-checks examples/deno with Deno', () => {
    const { status, output } = deno(['check', 'examples/deno/server.ts'])
    expect(status, output).toBe(0)
  }, 600_000)
})
