/**
 * Where the `episodic` command reads its environment and working folder and
 * writes its output. `main(argv)` uses the process's; `main(argv, io)` runs a
 * verb in-process with its own (tests capture stdout/stderr this way instead
 * of spawning a process per call). The current IO travels with the async
 * call (AsyncLocalStorage), so concurrent in-process runs do not mix output.
 *
 * @example
 * let out = ''
 * const code = await main(['clients', 'list'], { env: { EPISODIC_DATA_DIR: dir }, cwd: dir, stdout: (t) => (out += t), stderr: () => {} })
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { format } from 'node:util'

export interface CliIO {
  /** Environment variables the command reads (configuration, credentials). */
  env: Record<string, string | undefined>
  /** Folder relative paths (policy modules, `@file` lists) resolve against. */
  cwd: string
  /** Receives standard output text, newlines included. */
  stdout(text: string): void
  /** Receives standard error text, newlines included. */
  stderr(text: string): void
}

const current = new AsyncLocalStorage<CliIO>()

/** The running process's environment, folder and streams. */
export function processIO(): CliIO {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  }
}

/** The IO of the command running in this async context (the process's outside `withIO`). */
export function cliIO(): CliIO {
  return current.getStore() ?? processIO()
}

/** Runs `fn` with `io` as the current IO. */
export function withIO<T>(io: CliIO, fn: () => Promise<T>): Promise<T> {
  return current.run(io, fn)
}

/** `console.log` to the current IO's stdout. */
export function out(...args: unknown[]): void {
  cliIO().stdout(`${format(...args)}\n`)
}

/** `console.error` to the current IO's stderr. */
export function err(...args: unknown[]): void {
  cliIO().stderr(`${format(...args)}\n`)
}
