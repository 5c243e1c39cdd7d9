/**
 * End-to-end replay: 200 baseline episodes of 500 steps (half `savez`, half
 * `savez_compressed`, sensors ~2 MB each) served by the built-in object
 * store, replayed with a no-op policy by `episodic replay run --dry-run`
 * (a JavaScript policy, a Python policy through the bridge, and an
 * openpi-protocol policy server, answering one action per infer or, as pi0
 * servers do, chunks of 10 with --action-horizon 10), beside a numpy script
 * that fetches the same artifacts with 8 parallel downloads and runs the
 * same no-op policy and metrics. All in the same run, alternating, so load drift hits every side.
 *
 *   npx tsx bench/replay-e2e.ts            (or: npm run bench -- replay-e2e)
 *
 * Needs python3 with numpy; the policy-server row also needs msgpack and
 * websockets (Debian: /usr/bin/python3 with python3-msgpack, python3-websockets).
 * Targets: JavaScript >= 1.5x numpy's speed, Python through the bridge >= 1.0x,
 * bridge overhead <= 30 us per step.
 *
 * Knobs: E2E_EPISODES (200), E2E_ROUNDS (2), E2E_SIDES=numpy,javascript (a
 * subset), E2E_VARIANTS=1 (adds numpy with 16 downloads, no read-ahead,
 * --concurrency 2 for the JavaScript and the Python policy), E2E_PROFILE=1 (CPU profiles of the CLI runs in
 * /tmp/e2e-prof), E2E_AB=DIR (adds the JavaScript and Python runs with the
 * CLI of the checkout in DIR, for an interleaved A/B), E2E_NODE_FLAGS='--trace-gc ...' (Node flags for the CLI runs).
 */
import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { EpisodicClient } from '../src/client/client.ts'
import { pythonPolicy } from '../src/replay/python/policy.ts'
import { startService } from '../test/helpers/service.ts'
import { median } from './lib.ts'

const EPISODES = Number(process.env.E2E_EPISODES ?? 200)
const STEPS = 500
const ROUNDS = Number(process.env.E2E_ROUNDS ?? 2)
const PYTHON = process.env.PYTHON ?? 'python3'
const SERVER_PYTHON = process.env.POLICY_SERVER_PYTHON ?? '/usr/bin/python3'
/** The CLI is bundled as the npm package ships it (dist/cli.js), so Node's start-up is not tsx's. */
const BUNDLE_DIR = resolve('node_modules/.cache/episodic-bench-e2e')
/** GNU time, for each side's CPU seconds (absent: CPU columns read NaN). */
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null

/** numpy writes the baselines: `make DIR` -> stored.npz / deflated.npz sensors and actions.npz. */
const MAKE = String.raw`
import sys, numpy as np
out, steps = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
t = np.arange(steps)[:, None]
pos = np.sin(t / 50 + np.arange(7)) + rng.normal(0, 1e-3, (steps, 7))
vel = np.gradient(pos, axis=0) * 30
yy, xx = np.mgrid[0:32, 0:32]
depth = np.round(1.2 + 0.4 * np.sin(xx / 9 + t[:, :, None] / 80) * np.cos(yy / 13) + rng.normal(0, 0.002, (steps, 32, 32)), 3).astype(np.float32)
rgb = rng.integers(0, 255, (steps, 16, 16, 3), dtype=np.uint8)
sensors = {'/joint_states/position': pos, '/joint_states/velocity': vel, '/camera/depth': depth, '/camera/rgb': rgb}
np.savez(out + '/stored.npz', **sensors)
np.savez_compressed(out + '/deflated.npz', **sensors)
np.savez(out + '/actions.npz', **{'/action/joint_position': pos + rng.normal(0, 0.01, pos.shape)})
`

/** The numpy side: 8 parallel downloads, then per episode the same no-op policy loop and metrics. */
const NUMPY = String.raw`
import io, json, sys, time, urllib.request, numpy as np
from concurrent.futures import ThreadPoolExecutor
base, key, ids, threads = sys.argv[1], sys.argv[2], sys.argv[3].split(','), int(sys.argv[4])
headers = {'authorization': 'Bearer ' + key}
def get(url, auth=True):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers if auth else {})) as r:
        return r.read()
def fetch(id):
    meta = json.loads(get(base + '/api/episodes/' + id))
    arts = {}
    for kind in ('actions', 'sensors'):
        url = json.loads(get(base + '/api/episodes/' + id + '/artifact/' + kind))['url']
        arts[kind] = get(url, auth=False)
    return meta, arts
def policy(obs):
    return {'/action/joint_position': obs['/joint_states/position']}
def replay(meta, arts):
    with np.load(io.BytesIO(arts['actions'])) as f: actions = {k: f[k] for k in f.files}
    with np.load(io.BytesIO(arts['sensors'])) as f: sensors = {k: f[k] for k in f.files}
    steps = len(next(iter(actions.values())))
    cand = {k: np.empty_like(v, dtype=np.float64) for k, v in actions.items()}
    for i in range(steps):
        action = policy({k: v[i] for k, v in sensors.items()})
        for k in cand:
            if k in action: cand[k][i] = action[k]
    b = np.concatenate([actions[k].astype(np.float64) for k in cand], axis=1)
    c = np.concatenate(list(cand.values()), axis=1)
    l2 = np.linalg.norm(c - b, axis=1).mean()
    ood = ((c < b.min(0)) | (c > b.max(0))).any(axis=1).mean()
    return l2, ood
t0 = time.perf_counter()
with ThreadPoolExecutor(threads) as pool:
    out = [replay(*episode) for episode in pool.map(fetch, ids)]
print(json.dumps({'seconds': time.perf_counter() - t0, 'l2_first': out[0][0]}))
`

const POLICY_MJS = `export const noop = (obs) => ({ '/action/joint_position': obs['/joint_states/position'] })\n`
const POLICY_PY = `def noop(obs):\n    return {'/action/joint_position': obs['/joint_states/position']}\n`

/** What one side cost: wall seconds (spawn to exit), its own CPU seconds, the service's CPU seconds meanwhile. */
interface Timed {
  seconds: number
  cpu: number
  serverCpu: number
  stdout: string
}

/**
 * Runs a command to its end under /usr/bin/time (when present) for its CPU
 * seconds; the service runs in this process, so its CPU over the same span is
 * `process.cpuUsage()`'s delta. CPU seconds move far less with the machine's
 * load than wall seconds do.
 */
function timed(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Timed> {
  return new Promise((done, fail) => {
    const cpuFile = join(tmpdir(), `episodic-e2e-cpu-${process.pid}`)
    const wrapped = TIME ? [TIME, ['-f', '%U %S', '-o', cpuFile, command, ...args]] as const : [command, args] as const
    const t0 = performance.now()
    const server0 = process.cpuUsage()
    const child = spawn(wrapped[0], wrapped[1], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.on('close', (code) => {
      if (code !== 0) return fail(new Error(`${command} ${args.slice(0, 3).join(' ')} exited ${code}:\n${stdout.slice(-2000)}`))
      const seconds = (performance.now() - t0) / 1000
      if (process.env.E2E_NODE_FLAGS) writeFileSync(join(tmpdir(), `episodic-e2e-stdout-${Date.now()}.txt`), stdout)
      const server = process.cpuUsage(server0)
      const cpu = TIME ? readFileSync(cpuFile, 'utf8').trim().split('\n').at(-1)!.split(' ').reduce((a, b) => a + Number(b), 0) : NaN
      done({ seconds, cpu, serverCpu: (server.user + server.system) / 1e6, stdout })
    })
  })
}

export async function main(): Promise<void> {
  const probe = spawnSync(PYTHON, ['-c', 'import numpy'])
  if (probe.status !== 0) {
    console.log(`SKIPPED: ${PYTHON} with numpy not found`)
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'episodic-e2e-'))
  const svc = await startService('pglite')
  const servers: ReturnType<typeof spawn>[] = []
  try {
    spawnSync(PYTHON, ['-c', MAKE, dir, String(STEPS)], { stdio: 'inherit' })
    const files = {
      stored: readFileSync(join(dir, 'stored.npz')),
      deflated: readFileSync(join(dir, 'deflated.npz')),
      actions: readFileSync(join(dir, 'actions.npz')),
    }
    const key = (await svc.newTenant('e2e')).key
    const client = new EpisodicClient({ apiKey: key, baseUrl: svc.url })
    const ids: string[] = []
    for (let i = 0; i < EPISODES; i++) {
      const sensors = i % 2 === 0 ? files.stored : files.deflated
      const opened = await client.openEpisode({
        robot: 'arm-1',
        policy_version: 'base',
        fps: 30,
        metadata: { success: true, reward_total: 1 },
        request_uploads: ['actions', 'sensors'],
      })
      for (const entry of opened.upload_urls) await client.upload(entry, entry.kind === 'actions' ? files.actions : sensors)
      await client.finalizeEpisode(opened.episode_id, { status: 'ready', bytes_total: files.actions.length + sensors.length })
      ids.push(opened.episode_id)
    }
    writeFileSync(join(dir, 'ids.txt'), ids.join('\n'))
    writeFileSync(join(dir, 'noop.mjs'), POLICY_MJS)
    writeFileSync(join(dir, 'noop_policy.py'), POLICY_PY)
    cpSync(resolve('test/fixtures/policies/openpi_server.py'), join(dir, 'openpi_server.py'))
    console.log(
      `${EPISODES} episodes x ${STEPS} steps; sensors ${(files.stored.length / 1e6).toFixed(2)} MB (savez) / ${
        (files.deflated.length / 1e6).toFixed(2)
      } MB (savez_compressed); ${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(1)}`,
    )

    const env = { EPISODIC_API_KEY: key, EPISODIC_BASE_URL: svc.url, EPISODIC_CREDENTIALS_FILE: join(dir, 'none'), PYTHONDONTWRITEBYTECODE: '1' }
    const cli = await bundleCli()
    const replay = (policy: string[], bundle = cli, extraEnv: Record<string, string> = {}) =>
      timed(process.execPath, [
        ...(process.env.E2E_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', '/tmp/e2e-prof'] : []),
        ...(process.env.E2E_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
        bundle,
        'replay',
        'run',
        ...policy,
        '--candidate-version',
        'noop',
        '--baseline-episodes',
        '@ids.txt',
        '--dry-run',
      ], { cwd: dir, env: { ...env, ...extraEnv } })
    const sides: Record<string, (bundle?: string) => Promise<Timed>> = {
      numpy: () => timed(PYTHON, ['-c', NUMPY, svc.url, key, ids.join(','), '8']),
      javascript: () => replay(['--policy', './noop.mjs:noop']),
      python: () => replay(['--policy', './noop_policy.py:noop', '--python', PYTHON]),
    }
    if (spawnSync(SERVER_PYTHON, ['-c', 'import numpy, msgpack, websockets']).status === 0) {
      const maps = ['--obs-map', '/joint_states/position=observation/state,/camera/depth=observation/image', '--action-map', 'actions=/action/joint_position']
      const url = await startServer(servers, join(dir, 'openpi_server.py'))
      sides['policy server'] = () => replay(['--policy', url, ...maps])
      // As openpi's pi0 servers answer: chunks of 10 actions, one infer every 10 steps.
      const chunked = await startServer(servers, join(dir, 'openpi_server.py'), ['--chunk', '10'])
      sides['chunked server'] = (bundle = cli) => replay(['--policy', chunked, ...maps, '--action-horizon', '10'], bundle)
    }
    if (process.env.E2E_VARIANTS) {
      // Where the time goes: more numpy downloads, no read-ahead, two episodes at once.
      sides['numpy, 16 dl'] = () => timed(PYTHON, ['-c', NUMPY, svc.url, key, ids.join(','), '16'])
      sides['js, no prefetch'] = () => replay(['--policy', './noop.mjs:noop', '--prefetch-mb', '0'])
      sides['js, concurrency 2'] = () => replay(['--policy', './noop.mjs:noop', '--concurrency', '2'])
      sides['python c2'] = () => replay(['--policy', './noop_policy.py:noop', '--python', PYTHON, '--concurrency', '2'])
      // glibc 2.35+: malloc's large blocks (V8's ArrayBuffers) in transparent huge pages, as numpy's arrays are.
      sides['js hugetlb'] = () => replay(['--policy', './noop.mjs:noop'], cli, { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' })
    }
    if (process.env.E2E_AB) {
      // An interleaved A/B: the same JavaScript run with the CLI of another checkout (its node_modules are not needed).
      const other = await bundleCli(process.env.E2E_AB, `${BUNDLE_DIR}-ab`)
      sides['javascript (A/B)'] = () => replay(['--policy', './noop.mjs:noop'], other)
      sides['python (A/B)'] = () => replay(['--policy', './noop_policy.py:noop', '--python', PYTHON], other)
      const chunked = sides['chunked server']
      if (chunked) sides['chunked (A/B)'] = () => chunked(other)
    }
    if (!sides['policy server']) console.log(`(policy-server row skipped: ${SERVER_PYTHON} lacks numpy, msgpack or websockets)`)

    if (process.env.E2E_SIDES) { for (const name of Object.keys(sides)) if (!process.env.E2E_SIDES.split(',').includes(name)) delete sides[name] }
    await replay(['--help']) // warms the file cache
    const times: Record<string, Timed[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]))
    for (let r = 0; r < ROUNDS; r++) for (const [name, run] of Object.entries(sides)) times[name]!.push(await run())
    const med = (name: string, field: 'seconds' | 'cpu' | 'serverCpu') => median((times[name] ?? []).map((t) => t[field]))
    const numpy = med('numpy', 'seconds')
    const target: Record<string, string> = { javascript: '>= 1.5x', python: '>= 1.0x' }
    console.log(
      `${'side'.padEnd(18)}${'seconds'.padStart(9)}${'vs numpy'.padStart(10)}${'CPU s'.padStart(8)}${
        'service CPU s'.padStart(15)
      }  target   (medians of ${ROUNDS}; wall time from process start to exit)`,
    )
    for (const name of Object.keys(times)) {
      const s = med(name, 'seconds')
      const ratio = name === 'numpy' ? '-' : `${(numpy / s).toFixed(2)}x`
      console.log(
        `${name.padEnd(18)}${s.toFixed(2).padStart(9)}${ratio.padStart(10)}${med(name, 'cpu').toFixed(2).padStart(8)}${
          med(name, 'serverCpu').toFixed(2).padStart(15)
        }  ${target[name] ?? ''}`,
      )
    }
    const ratios = (name: string) => (times[name] ?? []).map((t, r) => ((times.numpy?.[r]?.seconds ?? NaN) / t.seconds).toFixed(2)).join(' ')
    for (const name of Object.keys(times)) if (name !== 'numpy') console.log(`${name} vs numpy per round: ${ratios(name)}`)
    console.log(`load now ${loadavg()[0]!.toFixed(1)}`)
    if (!times.python) return
    const overhead = await bridgeOverhead(dir)
    const perStep = ((med('python', 'seconds') - med('javascript', 'seconds')) * 1e6) / (EPISODES * STEPS)
    console.log(
      `bridge overhead per step (no-op Python policy): ${overhead.episode.toFixed(1)} us as replay runs it, a whole episode per frame (target <= 30), ${
        overhead.roundTrip.toFixed(1)
      } us one step's round trip at a time; end to end (python - javascript) / steps: ${perStep.toFixed(1)} us; load now ${loadavg()[0]!.toFixed(1)}`,
    )
  } finally {
    for (const server of servers) server.kill()
    await svc.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Bundles src/cli/main.ts as tsup builds dist/cli.js (the bridge beside it); returns the file. */
async function bundleCli(checkout = '.', outDir = BUNDLE_DIR): Promise<string> {
  const { build } = await import('tsup')
  await build({
    entry: { cli: join(checkout, 'src/cli/main.ts') },
    outDir,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    dts: false,
    clean: true,
    silent: true,
    config: false,
    external: ['tsx'],
    removeNodeProtocol: false,
  })
  cpSync(resolve(checkout, 'src/replay/python/episodic_bridge.py'), join(outDir, 'episodic_bridge.py'))
  return join(outDir, 'cli.js')
}

/**
 * The bridge's cost per step with a no-op Python policy and observations
 * shaped like the bench's: as replay runs it (whole 500-step episodes through
 * `actEpisode`, one frame each way; median of 5 batches of 10 episodes), and
 * one `act` round trip at a time (latency; median of 5 batches of 2,000).
 */
async function bridgeOverhead(dir: string): Promise<{ roundTrip: number; episode: number }> {
  const policy = pythonPolicy({ module: 'noop_policy.py:noop', python: PYTHON, cwd: dir })
  try {
    const steps = STEPS
    const context = { episodeIndex: 0, baselineEpisodeId: 'b', steps }
    await policy.reset(context)
    const episode = {
      '/joint_states/position': { dtype: 'float64' as const, shape: [steps, 7], data: new Float64Array(steps * 7), order: 'C' as const },
      '/joint_states/velocity': { dtype: 'float64' as const, shape: [steps, 7], data: new Float64Array(steps * 7), order: 'C' as const },
      '/camera/depth': { dtype: 'float32' as const, shape: [steps, 32, 32], data: new Float32Array(steps * 1024), order: 'C' as const },
      '/camera/rgb': { dtype: 'uint8' as const, shape: [steps, 16, 16, 3], data: new Uint8Array(steps * 768), order: 'C' as const },
    }
    const observation = Object.fromEntries(
      Object.entries(episode).map(([k, v]) => [k, { ...v, shape: v.shape.slice(1), data: v.data.subarray(0, v.data.length / steps) }]),
    )
    for (let i = 0; i < 5; i++) await policy.actEpisode(episode, context)
    for (let i = 0; i < 500; i++) await policy.act(observation, { ...context, step: 0 })
    const roundTrip: number[] = []
    const perEpisode: number[] = []
    for (let b = 0; b < 5; b++) {
      let t0 = performance.now()
      for (let i = 0; i < 10; i++) await policy.actEpisode(episode, context)
      perEpisode.push(((performance.now() - t0) * 1000) / (10 * steps))
      t0 = performance.now()
      for (let i = 0; i < 2000; i++) await policy.act(observation, { ...context, step: 0 })
      roundTrip.push(((performance.now() - t0) * 1000) / 2000)
    }
    return { roundTrip: median(roundTrip), episode: median(perEpisode) }
  } finally {
    await policy.close()
  }
}

async function startServer(servers: ReturnType<typeof spawn>[], script: string, args: string[] = []): Promise<string> {
  const server = spawn(SERVER_PYTHON, [script, '--noop', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  servers.push(server)
  const { value } = await createInterface({ input: server.stdout! })[Symbol.asyncIterator]().next()
  return `ws://127.0.0.1:${String(value).trim()}`
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
