/**
 * Replay hot-path benchmark: NPZ decode, action metrics and the per-step loop,
 * each next to numpy doing the same work on the same files in the same run.
 *
 *   npx tsx bench/replay.ts
 *
 * Needs python3 with numpy (it builds the episode and times numpy). Prints
 * MB/s, ns per element and ns per step with the ratio to numpy (> 1 = faster).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'
import zlib from 'node:zlib'
import { actionMetrics, CandidateRecorder } from '../src/replay/metrics.ts'
import { createZlibInflate, type NdArray, readNpz, stepView } from '../src/replay/npz/index.ts'
import { median } from './lib.ts'

const STEPS = 3000
/** glibc malloc tunable: madvise transparent huge pages on big mappings (glibc >= 2.35). */
const HUGE_PAGES = 'glibc.malloc.hugetlb=1'
/** Timed runs per decode figure (the median is printed). */
const RUNS = 9

/**
 * numpy's side: `make DIR STEPS` writes one realistic episode (numpy writes the
 * files) and prints facts about it as JSON; `serve DIR` then times numpy on
 * request, one line per command, so each of our timings is paired with one of
 * numpy's taken moments apart (this machine's speed drifts between runs).
 */
const PYTHON = String.raw`
import io, json, sys, time, timeit, numpy as np
mode, out = sys.argv[1], sys.argv[2]
if mode == 'make':
    steps = int(sys.argv[3])
    rng = np.random.default_rng(1)
    t = np.arange(steps)[:, None]
    pos = np.sin(t / 200 + np.arange(7)) + rng.normal(0, 1e-3, (steps, 7))
    vel = np.gradient(pos, axis=0) * 30
    yy, xx = np.mgrid[0:64, 0:64]
    depth = 1.2 + 0.4 * np.sin(xx / 9 + t[:, :, None] / 300) * np.cos(yy / 13)
    depth = np.round(depth + rng.normal(0, 0.002, depth.shape), 3).astype(np.float32)  # millimetre depth
    sensors = {'/joint_states/position': pos, '/joint_states/velocity': vel, '/camera/depth': depth}
    np.savez(out + '/stored.npz', **sensors)
    np.savez_compressed(out + '/deflated.npz', **sensors)
    base = {'/action/joint_position': pos, '/action/joint_velocity': vel}
    cand = {k: v + rng.normal(0, 0.01, v.shape) for k, v in base.items()}
    np.savez(out + '/baseline.npz', **base)
    np.savez(out + '/candidate.npz', **cand)
    print(json.dumps({'nbytes': sum(a.nbytes for a in sensors.values()), 'elements': sum(a.size for a in base.values())}))
    sys.exit(0)

def load_touch(src):
    with np.load(src) as f:
        for k in f.files:
            f[k]
# Freeing one 16 MB buffer raises glibc's mmap threshold, as any real workload soon does; without
# it every numpy temporary over 128 KB is a fresh mmap that page-faults (L2 measured 4x slower).
np.ones(2 << 20)
files = {name: open(out + '/' + name + '.npz', 'rb').read() for name in ['stored', 'deflated']}
# numpy madvises huge pages for big arrays (V8 cannot by itself), which saves page faults on fresh output memory
madv = getattr(np._core.multiarray if hasattr(np, '_core') else np.core.multiarray, '_set_madvise_hugepage', None)
with np.load(out + '/baseline.npz') as f: base = {k: f[k] for k in f.files}
with np.load(out + '/candidate.npz') as f: cand = {k: f[k] for k in f.files}
b = np.concatenate(list(base.values()), axis=1); c = np.concatenate(list(cand.values()), axis=1)
def l2(): return np.linalg.norm(c - b, axis=1).mean()
def ood(): return ((c < b.min(0)) | (c > b.max(0))).any(axis=1).mean()
def l2_per_key(): return np.sqrt(sum(((cand[k] - base[k]) ** 2).sum(axis=1) for k in base)).mean()
metrics = {'concat': lambda: (l2(), ood()), 'per_key': lambda: (l2_per_key(), ood()), 'l2': l2}
print(json.dumps({'l2': l2(), 'ood': ood(), 'huge_pages_switch': madv is not None}), flush=True)
for line in sys.stdin:
    cmd, arg, how = (line.split() + ['', ''])[:3]
    if cmd == 'load':
        src = out + '/' + arg + '.npz' if how == 'path' else io.BytesIO(files[arg])
        if how == 'nohuge': madv(False)
        t0 = time.perf_counter(); load_touch(src); s = time.perf_counter() - t0
        if how == 'nohuge': madv(True)
    else:
        s = timeit.timeit(metrics[arg], number=int(how)) / int(how)
    print(s, flush=True)
`

/** A numpy process timing on request (see PYTHON). */
interface Numpy {
  facts: { l2: number; ood: number; huge_pages_switch: boolean }
  time(command: string): Promise<number>
  close(): void
}

async function startNumpy(dir: string): Promise<Numpy> {
  const child = spawn('python3', ['-c', PYTHON, 'serve', dir], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async (): Promise<string> => {
    const { value, done } = await lines.next()
    if (done) throw new Error('the numpy process ended early (see its stderr above)')
    return value
  }
  const facts = JSON.parse(await next())
  return {
    facts,
    async time(command) {
      child.stdin.write(command + '\n')
      return Number(await next())
    },
    close: () => child.stdin.end(),
  }
}

/**
 * Pairs `rounds` timings of ours (`fn` called `inner` times) with numpy's
 * answer to `command` taken just before, after two unmeasured rounds. Returns
 * the medians of each side (seconds per call) and the median of the per-round
 * ratios numpy/ours (> 1 = we are faster), which drift cancels out of.
 */
async function paired(numpy: Numpy, command: string, fn: () => unknown, rounds: number, inner = 1): Promise<{ ours: number; theirs: number; ratio: number }> {
  const ours: number[] = []
  const theirs: number[] = []
  const ratios: number[] = []
  for (let r = 0; r < rounds + 2; r++) {
    const n = await numpy.time(command)
    const t0 = performance.now()
    for (let k = 0; k < inner; k++) fn()
    const o = (performance.now() - t0) / 1000 / inner
    if (r < 2) continue
    ours.push(o)
    theirs.push(n)
    ratios.push(n / o)
  }
  return { ours: median(ours), theirs: median(theirs), ratio: median(ratios) }
}

/** Seconds per call: the median of `runs` timings of `inner` back-to-back calls, after two unmeasured ones. */
function timePerCall(fn: () => unknown, runs: number, inner = 1): number {
  const ts: number[] = []
  for (let i = 0; i < runs + 2; i++) {
    const t0 = performance.now()
    for (let k = 0; k < inner; k++) fn()
    ts.push((performance.now() - t0) / 1000 / inner)
  }
  return median(ts.slice(2))
}

const fmt = (x: number, digits = 0): string => x.toFixed(digits).padStart(8)
const row = (label: string, ours: string, theirs: string, ratio: number): void => console.log(`${label.padEnd(58)} ${ours} ${theirs}   ${ratio.toFixed(2)}x`)

/** Feeds each step's observation (zero-copy views) to a no-op policy and records its action. */
function replayLoop(sensors: Record<string, NdArray>, recorder: CandidateRecorder, policy: (obs: Record<string, NdArray>) => Record<string, unknown>): void {
  const keys = Object.keys(sensors)
  for (let i = 0; i < recorder.steps; i++) {
    const obs: Record<string, NdArray> = {}
    for (let k = 0; k < keys.length; k++) obs[keys[k]] = stepView(sensors[keys[k]], i)
    recorder.record(i, policy(obs))
  }
}

/** Prints the decode rows for the stored and deflated archive in `dir`, each paired with numpy's time. */
async function decodeRows(dir: string, nbytes: number): Promise<void> {
  const numpy = await startNumpy(dir)
  try {
    const mb = nbytes / 1e6
    const zlibInflate = createZlibInflate(zlib.inflateRawSync)
    for (const file of ['stored', 'deflated'] as const) {
      const path = join(dir, `${file}.npz`)
      const bytes = new Uint8Array(readFileSync(path))
      console.log(`decode ${file} (${(bytes.length / 1e6).toFixed(1)} MB file), MB/s`)
      const inflate = file === 'stored' ? undefined : zlibInflate
      const via = inflate ? ' node:zlib' : ''
      // In-place decoding consumes its input: give each timed call its own copy, made beforehand.
      const copies = Array.from({ length: 2 * (RUNS + 2) }, () => bytes.slice())
      // [label, fn, numpy's side]: path = np.load(path), mem = np.load(BytesIO), nohuge = the same with numpy's huge pages off
      const variants: (readonly [string, () => unknown, 'path' | 'mem' | 'nohuge'])[] = [
        [`readNpz(readFileSync(path), { inPlace })${via}`, () => readNpz(readFileSync(path), { inflate, inPlace: true }), 'path'],
        // What runAgainst does with each download: in place, CRC-32s checked (as numpy's zipfile does).
        [`readNpz(bytes, { inPlace, verifyCrc: zlib.crc32 })${via}`, () => readNpz(copies.pop()!, { inflate, inPlace: true, verifyCrc: zlib.crc32 }), 'mem'],
        [`readNpz(bytes, { inPlace })${via}, no CRC check`, () => readNpz(copies.pop()!, { inflate, inPlace: true }), 'mem'],
        ...(file === 'stored'
          ? ([
            ['readNpz(bytes), bytes kept', () => readNpz(bytes), 'mem'],
            ...(numpy.facts.huge_pages_switch ? ([['readNpz(bytes), bytes kept', () => readNpz(bytes), 'nohuge']] as const) : []),
            ['readNpz(bytes, { verifyCrc: true }) (JS CRC), bytes kept', () => readNpz(bytes, { verifyCrc: true }), 'mem'],
          ] as const)
          : ([
            ['readNpz(bytes) fflate', () => readNpz(bytes), 'mem'],
            ['readNpz(bytes, { verifyCrc: true }) node:zlib (JS CRC)', () => readNpz(bytes, { inflate, verifyCrc: true }), 'mem'],
          ] as const)),
      ]
      const against = { path: 'np.load(path)', mem: 'np.load(BytesIO)', nohuge: 'np.load(BytesIO), numpy huge pages off' }
      for (const [label, fn, how] of variants) {
        const { ours, theirs, ratio } = await paired(numpy, `load ${file} ${how}`, fn, RUNS)
        row(`  ${label} vs ${against[how]}`, fmt(mb / ours), fmt(mb / theirs), ratio)
      }
    }
  } finally {
    numpy.close()
  }
}

/** Runs the benchmark and prints the table. */
export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-bench-'))
  try {
    const made = spawnSync('python3', ['-c', PYTHON, 'make', dir, String(STEPS)], { encoding: 'utf8' })
    if (made.status !== 0) throw new Error(`python3 + numpy needed:\n${made.stderr}`)
    const { nbytes, elements }: { nbytes: number; elements: number } = JSON.parse(made.stdout)
    console.log(`episode: ${STEPS} steps, 2 x [${STEPS},7] float64 + [${STEPS},64,64] float32 depth = ${(nbytes / 1e6).toFixed(1)} MB decoded`)
    // Ratios swing with other load on the machine; print it so a reading can be judged.
    console.log(`load average ${loadavg()[0].toFixed(2)} on ${availableParallelism()} CPUs; targets: decode >= 1x numpy, metrics >= 2x, loop <= 1000 ns/step`)
    console.log(`each figure: median of ${RUNS} timings, each paired with a numpy timing taken just before; ratio = median of the pairs' ratios`)
    console.log(`${''.padEnd(58)} ${'ours'.padStart(8)} ${'numpy'.padStart(8)}   ours/numpy speed`)

    await decodeRows(dir, nbytes)
    // numpy madvises its big arrays into transparent huge pages; V8's allocations get the same
    // only through glibc's malloc tunable, which must be set before the process starts.
    if ((process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime) {
      console.log(`decode again in a child with GLIBC_TUNABLES=${HUGE_PAGES} (huge pages for big buffers, as numpy's allocator does):`)
      const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--decode-only', dir, String(nbytes)], {
        env: { ...process.env, GLIBC_TUNABLES: HUGE_PAGES },
        stdio: 'inherit',
      })
      if (child.status !== 0) throw new Error(`decode child exited with ${child.status}`)
    }

    const numpy = await startNumpy(dir)
    try {
      const baseline = readNpz(readFileSync(join(dir, 'baseline.npz')))
      const candidate = readNpz(readFileSync(join(dir, 'candidate.npz')))
      const m = actionMetrics(baseline, candidate)
      const { l2, ood } = numpy.facts
      console.log(
        `metrics, ns/element over ${elements} elements (l2 ${m.action_l2_mean?.toFixed(6)} vs numpy ${
          l2.toFixed(6)
        }, ood ${m.ood_action_share_candidate} vs ${ood})`,
      )
      const ns = (s: number): string => fmt((s * 1e9) / elements, 2)
      for (
        const [label, command] of [
          ['L2+OOD vs numpy L2+OOD (concatenated)', 'metrics concat 200'],
          ['L2+OOD vs numpy per-key L2 + OOD', 'metrics per_key 200'],
          ['L2+OOD vs numpy L2 alone (less work)', 'metrics l2 200'],
        ]
      ) {
        const { ours, theirs, ratio } = await paired(numpy, command, () => actionMetrics(baseline, candidate), RUNS, 200)
        row(`  ${label}`, ns(ours), ns(theirs), ratio)
      }

      const sensors = readNpz(readFileSync(join(dir, 'stored.npz')))
      const action = { '/action/joint_position': new Float64Array(7), '/action/joint_velocity': new Float64Array(7) }
      const noop = (): Record<string, unknown> => action
      const loop = timePerCall(() => replayLoop(sensors, new CandidateRecorder(baseline), noop), 7, 20)
      const views = timePerCall(
        () => {
          for (let i = 0; i < STEPS; i++) stepView(sensors['/camera/depth'], i)
        },
        7,
        20,
      )
      console.log(`replay loop, ns/step (3 stepView observations -> no-op policy -> record 2 x 7 values)`)
      console.log(`  loop incl. recorder allocation ${fmt((loop * 1e9) / STEPS, 0)}   (one stepView alone: ${((views * 1e9) / STEPS).toFixed(0)} ns)`)
    } finally {
      numpy.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--decode-only') await decodeRows(process.argv[3], Number(process.argv[4]))
  else await main()
}
