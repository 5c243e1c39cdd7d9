/**
 * Runs the `episodic` command as users do (the built bin in a separate Node
 * process, test/helpers/build.ts), for the reliability suites: one-shot verbs,
 * and `serve` processes a test can wait for, kill and restart.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { builtCli } from '../helpers/cli.ts'

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
  /** Wall-clock milliseconds until the process exited. */
  ms: number
}

/** The environment a CLI process gets: PATH, a HOME, and `env` (nothing else leaks in). */
function childEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', EPISODIC_CREDENTIALS_FILE: '/nonexistent', ...env }
}

/** Runs `episodic <args>` to completion. */
export async function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliResult> {
  const [command, prefix] = await builtCli()
  return new Promise((done) => {
    const started = Date.now()
    const child = spawn(command, [...prefix, ...args], { env: childEnv(env) })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr, ms: Date.now() - started })
    })
  })
}

export interface ServeProcess {
  child: ChildProcess
  pid: number
  url: string
  output(): string
  /** Sends `signal` and resolves once the process has exited (and been reaped). */
  kill(signal?: NodeJS.Signals): Promise<void>
}

/** Starts `episodic serve --port 0` and resolves once it listens (rejects if it exits first). */
export async function startServe(env: Record<string, string>, timeoutMs = 60_000): Promise<ServeProcess> {
  const [command, prefix] = await builtCli()
  return new Promise((done, fail) => {
    const child = spawn(command, [...prefix, 'serve', '--port', '0'], { env: childEnv(env) })
    let out = ''
    const exited = new Promise<void>((r) => child.once('exit', () => r()))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`serve did not start within ${timeoutMs} ms:\n${out}`))
    }, timeoutMs)
    const onData = (d: Buffer) => {
      out += d
      const match = /episodic listening on (http:\/\/\S+)/.exec(out)
      if (match) {
        clearTimeout(timer)
        done({
          child,
          pid: child.pid!,
          url: match[1]!,
          output: () => out,
          async kill(signal = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal)
            await exited
          },
        })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (d) => (out += d))
    child.once('exit', (code) => {
      clearTimeout(timer)
      fail(new Error(`serve exited with ${code} before listening:\n${out}`))
    })
  })
}
