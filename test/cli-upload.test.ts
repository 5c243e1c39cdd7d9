/**
 * `episodic upload` as a user runs it against a live service: the episode
 * id on stdout and the portal link on stderr, progress lines when stderr is
 * not a terminal, a repeat with the same --idempotency-key that reopens the
 * same episode, and Ctrl-C in the middle of a multipart upload (exit 130)
 * followed by a run that resumes it. A small proxy in front of the service
 * holds back one part so the interruption lands mid-upload every time.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EpisodicClient } from '../src/client/client.ts'
import { builtCli } from './helpers/cli.ts'
import { startService, type TestService } from './helpers/service.ts'

const MiB = 1024 * 1024
const TIMEOUT = 180_000
let svc: TestService
let key: string
let dir: string
let proxy: Server
let proxyUrl: string
/** Part requests the proxy holds without answering while set. */
let holdPart: string | null = null
let partDone: (() => void) | null = null

beforeAll(async () => {
  svc = await startService('pglite')
  key = (await svc.newTenant('cli-upload')).key
  dir = mkdtempSync(join(tmpdir(), 'episodic-upload-cli-'))
  writeFileSync(join(dir, 'actions.npz'), Buffer.alloc(1000, 7))
  writeFileSync(join(dir, 'meta.json'), JSON.stringify({ operator: 'ada' }))
  const big = Buffer.alloc(70 * MiB)
  for (let i = 0; i < big.length; i += 4096) big[i] = i & 0xff
  writeFileSync(join(dir, 'video.mp4'), big)
  const target = new URL(svc.url)
  proxy = createServer((req, res) => {
    if (holdPart && req.method === 'PUT' && req.url?.includes(`partNumber=${holdPart}&`)) {
      req.resume() // read and never answer: the connection just hangs, as on a stalled network
      return
    }
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (reply) => {
      res.writeHead(reply.statusCode!, reply.headers)
      reply.pipe(res)
      if (req.method === 'PUT' && req.url?.includes('partNumber=')) reply.on('end', () => partDone?.())
    })
    req.pipe(upstream)
  })
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`
}, TIMEOUT)
afterAll(async () => {
  proxy?.closeAllConnections()
  proxy?.close()
  await svc?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Runs the built bin (a real process: the test sends it Ctrl-C). */
async function cli(
  args: string[],
  onSpawn?: (child: ChildProcess) => void,
  baseUrl = proxyUrl,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [command, prefix] = await builtCli()
  return new Promise((done) => {
    const child = spawn(command, [...prefix, 'upload', ...args], {
      cwd: dir,
      env: {
        PATH: process.env.PATH!,
        HOME: dir,
        XDG_CACHE_HOME: join(dir, 'cache'),
        EPISODIC_CREDENTIALS_FILE: join(dir, 'none'),
        EPISODIC_API_KEY: key,
        EPISODIC_BASE_URL: baseUrl,
      },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => done({ code, stdout, stderr }))
    onSpawn?.(child)
  })
}

const client = () => new EpisodicClient({ apiKey: key, baseUrl: svc.url })

/** Runs `upload ...args` and sends it Ctrl-C once a part is through while part 2 is held back. */
async function interruptedMidUpload(args: string[]) {
  holdPart = '2'
  let interrupted = false
  const stopped = await cli(args, (child) => {
    partDone = () => {
      if (interrupted) return
      interrupted = true
      setTimeout(() => child.kill('SIGINT'), 100)
    }
  })
  holdPart = null
  partDone = null
  return { stopped, interrupted }
}

describe('episodic upload', () => {
  it('records an episode: id on stdout, portal link and progress on stderr; the same key again reopens it', async () => {
    const args = [
      '--actions',
      'actions.npz',
      '--robot',
      'arm-3',
      '--seed',
      '42',
      '--fps',
      '30',
      '--duration',
      '16.5',
      '--metadata',
      '@meta.json',
      '--idempotency-key',
      'small-1',
      '--verify',
    ]
    const first = await cli(args)
    expect(first.code, first.stderr).toBe(0)
    const id = first.stdout.trim()
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(first.stderr).toContain(`${proxyUrl}/portal/episodes/${id}`)
    expect(first.stderr).toMatch(/100% 1.0 kB \/ 1.0 kB {2}\d+(\.\d)? [kMG]?B\/s .* left {2}(sending actions|finishing)\n/)
    expect(first.stderr).toMatch(/100% 1.0 kB \/ 1.0 kB .* left {2}done\n/)
    const episode = await client().getEpisode(id)
    expect(episode).toMatchObject({ status: 'ready', robot: 'arm-3', seed: 42, fps: 30, duration_s: 16.5, bytes_total: 1000, metadata: { operator: 'ada' } })
    const again = await cli(args)
    expect(again.code).toBe(0)
    expect(again.stdout.trim()).toBe(id)
    expect(again.stderr).toContain(`resumed episode ${id}`)
  }, TIMEOUT)

  it('stops on Ctrl-C mid-upload (exit 130) and the same command resumes and finishes', async () => {
    const args = ['--video', 'video.mp4', '--idempotency-key', 'big-1']
    const { stopped, interrupted } = await interruptedMidUpload(args)
    expect(interrupted).toBe(true)
    expect(stopped.code, stopped.stderr).toBe(130)
    expect(stopped.stderr).toContain('run the same command again')
    expect(stopped.stdout).toBe('')

    // Through another address of the same service (another instance behind its own URL): the same upload goes on.
    const state = readdirSync(join(dir, 'cache', 'episodic', 'uploads')).map((name) => join(dir, 'cache', 'episodic', 'uploads', name))
    expect(state).toHaveLength(1)
    const saved = readFileSync(state[0]!)
    const resumed = await cli(args, undefined, svc.url.replace('127.0.0.1', 'localhost'))
    expect(resumed.code, resumed.stderr).toBe(0)
    const id = resumed.stdout.trim()
    const artifacts = await client().listArtifacts(id)
    expect(artifacts.artifacts.find((a) => a.kind === 'video')).toMatchObject({ present: true, size: 70 * MiB })
    expect((await client().getEpisode(id)).bytes_total).toBe(70 * MiB)
    // The interrupted upload was the one completed: none is left open to linger in the bucket.
    expect(await svc.app.deps.db.selectFrom('multipart_uploads').select('upload_id').where('episode_id', '=', id).execute()).toEqual([])

    // A resume state outliving its upload (completed from elsewhere): the stored object counts, and the run ends well.
    writeFileSync(state[0]!, saved)
    const stale = await cli(args)
    expect(stale.code, stale.stderr).toBe(0)
    expect(stale.stderr).toContain(`resumed episode ${id}`)
  }, TIMEOUT)

  it('sends a --seed anywhere in the signed 64-bit range exactly', async () => {
    for (const seed of ['9223372036854775807', '-9223372036854775808']) {
      const done = await cli(['--actions', 'actions.npz', `--seed=${seed}`])
      expect(done.code, done.stderr).toBe(0)
      expect((await client().getEpisode(done.stdout.trim())).seed).toBe(BigInt(seed))
    }
    // As the help writes it, `--seed N`, a negative one too.
    const spaced = await cli(['--actions', 'actions.npz', '--seed', '-5'])
    expect(spaced.code, spaced.stderr).toBe(0)
    expect((await client().getEpisode(spaced.stdout.trim())).seed).toBe(-5)
    const negative = await cli(['--actions', 'actions.npz', '--duration', '-1'])
    expect([negative.code, negative.stderr]).toEqual([2, expect.stringContaining('--duration: must be a number of seconds, at least 0')])
    expect((await cli(['--actions', 'actions.npz', '--fps', '0x10'])).code).toBe(2)
  }, TIMEOUT)

  it('refuses bad flags and unreadable files with the documented exit codes', async () => {
    expect((await cli(['--seed', 'x', '--actions', 'actions.npz'])).code).toBe(2)
    const outside = await cli(['--seed', '9223372036854775808', '--actions', 'actions.npz'])
    expect(outside.code).toBe(2)
    expect(outside.stderr).toContain('--seed: must be within the signed 64-bit range')
    expect((await cli(['--source', 'moon'])).code).toBe(2)
    expect((await cli(['--video', 'missing.mp4'])).code).toBe(3)
    expect((await cli(['--metadata', '[1]'])).code).toBe(2)
    // A folder is refused before anything is opened (it used to fail as a network error, exit 5).
    const folder = await cli(['--actions', '.'])
    expect([folder.code, folder.stderr.trim()]).toEqual([3, `episodic: --actions: cannot read ${dir} (is a folder)`])
    for (const bad of ['', 'x'.repeat(256), 'caf\u00e9']) {
      const refused = await cli(['--actions', 'actions.npz', '--idempotency-key', bad])
      expect(refused.code, bad).toBe(2)
      expect(refused.stderr).toContain('--idempotency-key: must be 1 to 255 printable ASCII characters')
    }
    // The same key for another request is the caller's mistake too.
    expect((await cli(['--actions', 'actions.npz', '--idempotency-key', 'reused-1'])).code).toBe(0)
    const reused = await cli(['--actions', 'actions.npz', '--name', 'other', '--idempotency-key', 'reused-1'])
    expect(reused.code, reused.stderr).toBe(2)
    expect(reused.stderr).toContain('was already used for a different request')
  }, TIMEOUT)

  it('sends a file that changed after Ctrl-C afresh instead of resuming the old parts', async () => {
    const file = join(dir, 'changing.mp4')
    writeFileSync(file, Buffer.alloc(70 * MiB, 1))
    const args = ['--video', 'changing.mp4', '--idempotency-key', 'changing-1']
    const { stopped } = await interruptedMidUpload(args)
    expect(stopped.code, stopped.stderr).toBe(130)
    // Rewritten (grown, other bytes) before the same command runs again.
    const now = Buffer.alloc(75 * MiB, 2)
    writeFileSync(file, now)
    const again = await cli(args)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`episodic: ${file} changed since the interrupted upload; sending it afresh`)
    const id = again.stdout.trim()
    const stored = Buffer.from((await client().downloadArtifact(id, 'video')) as Uint8Array)
    expect(stored.length).toBe(now.length)
    expect(stored.equals(now)).toBe(true)
    expect((await client().getEpisode(id)).bytes_total).toBe(75 * MiB)
  }, TIMEOUT)
})
