/**
 * A dry run creates no eval run, so the service never checks that the
 * baselines are the caller's (spec: a foreign or unknown baseline is a
 * NotFoundError for the whole request). The dry run must refuse them the
 * same way instead of turning them into failed result rows (exit 0 or 8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { NotFoundError } from '../src/client/errors.ts'
import type { Observation } from '../src/replay/policy.ts'
import { createRun } from '../src/replay/eval-run.ts'
import { runAgainst } from '../src/replay/run.ts'
import { recordBaseline } from './helpers/baselines.ts'
import { runCli } from './helpers/cli.ts'
import { startService, type TestService } from './helpers/service.ts'

let svc: TestService
let mine: EpisodicClient
let own: string
let foreign: string

beforeAll(async () => {
  svc = await startService('pglite')
  mine = new EpisodicClient({ apiKey: (await svc.newTenant('dry-mine')).key, baseUrl: svc.url })
  const theirs = new EpisodicClient({ apiKey: (await svc.newTenant('dry-theirs')).key, baseUrl: svc.url })
  own = await recordBaseline(mine)
  foreign = await recordBaseline(theirs)
})
afterAll(async () => {
  await svc?.close()
})

const same = (obs: Observation) => ({ '/joint_states/position': obs['/joint_states/position']!.data })

describe("dry run with a baseline that is not the caller's", () => {
  it('runAgainst throws NotFoundError, as createRun does for a real run', async () => {
    const run = await createRun({ candidatePolicyVersion: 'v2', baselineEpisodeIds: [own, foreign], client: mine, dryRun: true })
    await expect(runAgainst(run, same)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('replay run --dry-run exits 4, as without --dry-run', async () => {
    const key = (await svc.newTenant('dry-cli')).key
    const cliOwn = await recordBaseline(new EpisodicClient({ apiKey: key, baseUrl: svc.url }))
    const result = await runCli(
      [
        'replay',
        'run',
        '--policy',
        'test/fixtures/policies/policies.mjs:byStep',
        '--candidate-version',
        'v2',
        '--dry-run',
        '--baseline-episodes',
        `${cliOwn},${foreign}`,
      ],
      { env: { EPISODIC_API_KEY: key, EPISODIC_BASE_URL: svc.url, EPISODIC_CREDENTIALS_FILE: '/nonexistent' } },
    )
    expect(result.code, result.stderr).toBe(4)
    expect(result.stderr).toContain(foreign)
  })
})
