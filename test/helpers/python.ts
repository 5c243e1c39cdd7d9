/**
 * Runs python3 + numpy from cross-checking tests. When either is missing the
 * suite is skipped with a loud `SKIPPED: python3/numpy not found` warning,
 * except under `CI=true`, where a missing interpreter fails the suite: CI must
 * never pass by silently not checking numpy compatibility.
 */
import { spawnSync } from 'node:child_process'
import { describeRequiring } from './requires.ts'

const PYTHON = realPython(process.env.PYTHON ?? 'python3')

/**
 * The interpreter's own executable (`sys.executable`), or `python` itself if
 * it cannot say. A version manager's shim (pyenv's `python3` is a bash script
 * that runs `pyenv exec`) costs about 0.3 s of CPU per start, and these suites
 * start Python a hundred times.
 */
export function realPython(python: string): string {
  const r = spawnSync(python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' })
  const executable = r.status === 0 ? r.stdout.trim() : ''
  return executable || python
}

let probed: string | null | undefined

/** numpy's version when `python3 -c "import numpy"` works, else null (probed once). */
export function numpyVersion(): string | null {
  if (probed === undefined) {
    const r = spawnSync(PYTHON, ['-c', 'import numpy; print(numpy.__version__)'], { encoding: 'utf8' })
    probed = r.status === 0 ? r.stdout.trim() : null
  }
  return probed
}

/**
 * Runs a Python script (given as source) with `args`; returns its stdout.
 * Throws with stderr when it exits non-zero.
 *
 * @example
 * runPython('import sys, numpy as np; np.savez(sys.argv[1], a=np.arange(3))', [file])
 */
export function runPython(script: string, args: string[] = []): string {
  const r = spawnSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (r.status !== 0) throw new Error(`python exited with ${r.status ?? r.signal}:\n${r.stderr}${r.error ? String(r.error) : ''}`)
  return r.stdout
}

/**
 * `describe` that runs only when python3 + numpy are available (see module doc
 * for the skip / CI rule).
 */
export function describeWithNumpy(name: string, body: () => void): void {
  describeRequiring(name, numpyVersion() !== null ? null : `python3/numpy not found (tried ${PYTHON}); install numpy or set PYTHON`, body)
}
