/**
 * The replay client (createRun, runAgainst, completeRun, recordEpisode) run
 * as a script on a runtime against the service the runtime suite started.
 */
import { expect, it } from 'vitest'
import { runScript, type RuntimeName, type RuntimeService } from './harness.ts'

export function replayClientTest(runtime: Exclude<RuntimeName, 'workers'>, service: () => RuntimeService): void {
  it(`runs the replay client on ${runtime}`, async () => {
    const { key } = await service().newTenant()
    const result = await runScript(runtime, 'test/runtimes/replay-client.ts', {
      EPISODIC_BASE_URL: service().url,
      EPISODIC_API_KEY: key,
      EPISODIC_CREDENTIALS_FILE: '/nonexistent',
    }, 240_000)
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout.trim().split('\n').pop()!)
    expect(report.statuses).toEqual(['done', 'done', 'failed'])
    expect(report.l2[0]).toBeCloseTo(Math.sqrt(7 * 0.01), 12)
    expect(report.l2[1]).toBeCloseTo(Math.sqrt(7 * 0.01), 12)
    expect(report.replayEpisodes).toBe(2)
    expect(report.failed).toBe(1)
    expect(report.recommend).toBe('hold')
    // node:zlib (through process.getBuiltinModule) is the inflater on all three.
    expect(report.zlib).toBe(true)
  }, 300_000)
}
