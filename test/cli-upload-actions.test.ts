/**
 * `episodic replay run --upload-actions`: the replay episode gets an
 * `actions.npz` holding exactly what the policy returned, the short id the
 * CLI prints opens that episode in the portal, and without the flag nothing
 * is uploaded.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { readNpz } from '../src/replay/npz/read.ts'
import { baselineAction, DOF, recordBaseline, STEPS } from './helpers/baselines.ts'
import { type CliResult, runCli } from './helpers/cli.ts'
import { startService, type TestService } from './helpers/service.ts'

let svc: TestService
let key: string
let client: EpisodicClient
let baseline: string
let dir: string

beforeAll(async () => {
  svc = await startService('pglite')
  key = (await svc.newTenant('uploader')).key
  client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
  baseline = await recordBaseline(client)
  dir = mkdtempSync(join(tmpdir(), 'episodic-upload-actions-'))
  writeFileSync(
    join(dir, 'policy.mjs'),
    `export const act = (obs) => ({ '/joint_states/position': Array.from(obs['/joint_states/position'].data, (x) => x * 2) })\n`,
  )
}, 60_000)
afterAll(async () => {
  await svc?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** `episodic replay run` in this process (test/helpers/cli.ts) with the user's environment. */
function replay(extra: string[]): Promise<CliResult> {
  return runCli(['replay', 'run', '--policy', './policy.mjs:act', '--candidate-version', 'v2', '--baseline-episodes', baseline, ...extra], {
    cwd: dir,
    env: { HOME: dir, EPISODIC_CREDENTIALS_FILE: join(dir, 'none'), EPISODIC_API_KEY: key, EPISODIC_BASE_URL: svc.url },
  })
}

async function replayEpisodeOf(stdout: string) {
  const runId = /^eval run ([0-9a-f-]{36}) /m.exec(stdout)![1]!
  const short = new RegExp(`^\\[1/1\\] ${baseline} -> ([0-9a-f]{8})$`, 'm').exec(stdout)![1]!
  const run = await client.getEvalRun(runId)
  const replayId = run.results[0]!.replay_episode_id!
  expect(replayId.startsWith(short)).toBe(true)
  return { short, episode: await client.getEpisode(replayId) }
}

it("uploads the candidate actions as the replay episode's actions.npz", { timeout: 60_000 }, async () => {
  const { code, stdout, stderr } = await replay(['--upload-actions'])
  expect(stderr).toBe('')
  expect(code).toBe(0)
  const { short, episode } = await replayEpisodeOf(stdout)
  expect(episode.artifacts).toEqual(['actions'])
  const arrays = readNpz(await client.downloadArtifact(episode.episode_id, 'actions'))
  const position = arrays['/joint_states/position']!
  expect(position.shape).toEqual([STEPS, DOF])
  expect(position.data[5 * DOF + 3]).toBe(baselineAction(5, 3) * 2)

  // The printed short id opens the episode in the portal.
  const login = await fetch(`${svc.url}/portal/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.url },
    body: new URLSearchParams({ api_key: key }),
  })
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  const open = await fetch(`${svc.url}/portal/episodes/${short}`, { redirect: 'manual', headers: { cookie } })
  expect(open.status).toBe(302)
  expect(open.headers.get('location')).toBe(`/portal/episodes/${episode.episode_id}`)
})

it('uploads nothing without the flag', { timeout: 60_000 }, async () => {
  const { code, stdout } = await replay([])
  expect(code).toBe(0)
  expect((await replayEpisodeOf(stdout)).episode.artifacts).toEqual([])
})
