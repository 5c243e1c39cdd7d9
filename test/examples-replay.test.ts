/**
 * examples/replay runs as its README says: record the baselines with the
 * script, then `episodic replay run` with the example policy.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startService, type TestService } from './helpers/service.ts'

let svc: TestService
let key: string
beforeAll(async () => {
  svc = await startService('pglite')
  key = (await svc.newTenant('example')).key
})
afterAll(async () => {
  await svc?.close()
  rmSync('examples/replay/baselines.txt', { force: true })
})

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env, EPISODIC_API_KEY: key, EPISODIC_BASE_URL: svc.url } })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('close', (code) => done({ code, out }))
  })
}

it('records baselines and replays the example policy end to end', async () => {
  const recorded = await run(['examples/replay/record-baselines.ts'])
  expect(recorded.code, recorded.out).toBe(0)
  expect(existsSync('examples/replay/baselines.txt')).toBe(true)
  expect(readFileSync('examples/replay/baselines.txt', 'utf8').trim().split('\n')).toHaveLength(3)
  const replay = await run(['src/cli/main.ts', 'replay', 'run', '--policy', 'examples/replay/policy.mjs:act', '--candidate-version', 'lookahead-v2', '--baseline-version', 'scripted-v1', '--baseline-episodes', '@examples/replay/baselines.txt'])
  expect(replay.code, replay.out).toBe(0)
  expect(replay.out).toMatch(/\[3\/3\] \S+ -> [0-9a-f]{8}/)
  expect(replay.out).toMatch(/recommendation: (SHIP|HOLD)/)
  expect(replay.out).toMatch(/^collision_rate\s+0\.333\s+0\s+-0\.333\s+better$/m)
})
