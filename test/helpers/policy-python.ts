/**
 * The Python interpreters the policy suites drive, probed once:
 * - the bridge's (`PYTHON`, else `python3` on PATH) needs numpy;
 * - the policy server's (`POLICY_SERVER_PYTHON`, else Debian's
 *   `/usr/bin/python3`) needs numpy, msgpack and websockets
 *   (`apt-get install python3-numpy python3-msgpack python3-websockets`).
 * A missing one skips its suite loudly, or fails it under `CI=true`.
 */
import { spawnSync } from 'node:child_process'
import { describeRequiring } from './requires.ts'
import { realPython } from './python.ts'

export const BRIDGE_PYTHON = realPython(process.env.PYTHON ?? 'python3')
export const SERVER_PYTHON = process.env.POLICY_SERVER_PYTHON ?? '/usr/bin/python3'

function has(python: string, modules: string[]): boolean {
  const r = spawnSync(python, ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8' })
  return r.status === 0
}

/** `describe` that runs when `python` imports `modules` (see the module doc for skipping). */
export function describeWithPython(name: string, python: string, modules: string[], body: () => void): void {
  describeRequiring(name, has(python, modules) ? null : `${python} cannot import ${modules.join(', ')}; install them (see .ci/run)`, body)
}
