/**
 * Two ways to run the `episodic` command in tests. `runCli` calls its main
 * function in this process with its own environment, folder and captured
 * output (no process start, no TypeScript loader: most CLI tests use this).
 * `spawnCli` runs the built bin (`node dist/cli.js`) as users do; each verb
 * family keeps one such smoke test.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { main } from '../../src/cli/main.ts'
import { ensureBuiltCli } from './build.ts'

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `episodic ...args` in-process; `env` is the whole environment it sees. */
export async function runCli(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const code = await main(args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    cwd: options.cwd ?? process.cwd(),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  })
  return { code, stdout, stderr }
}

/** The command line that runs the built CLI (building its bundles first if needed). */
export async function builtCli(): Promise<[string, string[]]> {
  const dist = await ensureBuiltCli()
  return [process.execPath, [join(dist, 'cli.js')]]
}

/** Runs the built `episodic` bin to completion; `env` is added to this process's. */
export async function spawnCli(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
  const [command, prefix] = await builtCli()
  return new Promise((done, fail) => {
    const child = spawn(command, [...prefix, ...args], { cwd: options.cwd, env: { ...process.env, DATABASE_URL: '', NO_COLOR: '1', ...options.env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.once('error', fail)
    child.once('close', (code) => done({ code, stdout, stderr }))
  })
}
