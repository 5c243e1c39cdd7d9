/**
 * The one runtime capability the Python bridge needs: starting a child
 * process with pipes. Typed by the subset of `node:child_process` it uses, so
 * this folder imports nothing from `node:`; `runtimeEnvironment()` finds
 * `child_process` where the runtime has one (Node, Deno, Bun), and a caller
 * may pass its own `spawn` (a sandbox, a container runner, a test double).
 */

/** What `pythonPolicy` drives: a started process with binary pipes. */
export interface BridgeProcess {
  /** Writes one frame to the child's standard input. */
  write(frame: Uint8Array): void
  /** Chunks of the child's standard output, in order. */
  onData(listener: (chunk: Uint8Array) => void): void
  /**
   * Exit (or failure to start: `error` set); `signal` names the signal that
   * killed it (`'SIGSEGV'`), if one did. Called once.
   */
  onExit(listener: (code: number | null, error?: Error, signal?: string) => void): void
  /** Keeps the runtime alive while a reply is awaited (`true`), lets it exit when idle (`false`). */
  hold(busy: boolean): void
  /** Ends the child: closes its standard input (it exits on end of input). */
  end(): void
  /** Stops the child at once: SIGKILL (the default), or SIGTERM where there are signals. */
  kill(signal?: 'SIGTERM' | 'SIGKILL'): void
}

/** Starts `command args` in `cwd` (default: ours) with standard error inherited. */
export type SpawnBridge = (command: string, args: string[], options: { cwd?: string }) => BridgeProcess

/** The subset of `node:child_process` used here. */
export interface ChildProcessModule {
  /** `child_process.spawn`: starts `command` with piped standard input and output. */
  spawn(command: string, args: string[], options: { cwd?: string; stdio: ['pipe', 'pipe', 'inherit'] }): ChildLike
}

/** The subset of a Node stream (a child's stdin or stdout) used here. */
export interface StreamLike {
  /** Adds an event listener (`'data'`, `'error'`, ...). */
  on(event: string, listener: (...args: never[]) => void): unknown
  /** Keeps the runtime alive while the stream is open. */
  ref?(): void
  /** Lets the runtime exit although the stream is open. */
  unref?(): void
}

/** The subset of a `ChildProcess` used here (what `spawn` returns). */
export interface ChildLike {
  /** The child's standard input; frames are written here, corked per batch. */
  stdin: (StreamLike & { write(data: Uint8Array): boolean; end(): void; cork(): void; uncork(): void }) | null
  /** The child's standard output; replies arrive here. */
  stdout: StreamLike | null
  /** Listens once for the child's exit or its failure to start. */
  once(event: 'exit' | 'error', listener: (...args: never[]) => void): unknown
  /** Keeps the runtime alive while the child runs. */
  ref(): void
  /** Lets the runtime exit although the child runs. */
  unref(): void
  /** Sends the child a signal. */
  kill(signal: 'SIGTERM' | 'SIGKILL'): unknown
}

/** How long after the child's exit its output may still be read before the exit is reported. */
const OUTPUT_GRACE_MS = 1000

/** A `SpawnBridge` over a `child_process` module. */
export function childProcessSpawner(childProcess: ChildProcessModule): SpawnBridge {
  return (command, args, { cwd }) => {
    const child = childProcess.spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'inherit'] })
    const stdin = child.stdin!
    const stdout = child.stdout!
    let exited: [number | null, Error | undefined, string | undefined] | null = null
    const exitListeners: ((code: number | null, error?: Error, signal?: string) => void)[] = []
    const exit = (code: number | null, error?: Error, signal?: string) => {
      if (exited) return
      exited = [code, error, signal]
      for (const listener of exitListeners) listener(code, error, signal)
    }
    child.once('error', (error: Error) => exit(null, error))
    // Reported once the child's output is read to its end: 'exit' can come while answers it wrote
    // before dying are still in the pipe, and the request they answer would be blamed for the crash.
    // But a process the policy forked (a PyTorch DataLoader worker) may hold the pipe open after the
    // bridge is gone, so the end of output is waited for only briefly.
    let ended = false
    let exitCode: number | null | undefined
    let exitSignal: string | undefined
    stdout.on('end', () => {
      ended = true
      if (exitCode !== undefined) exit(exitCode, undefined, exitSignal)
    })
    child.once('exit', (code: number | null, signal: string | null) => {
      exitCode = code
      exitSignal = signal ?? undefined
      if (ended) exit(code, undefined, exitSignal)
      else setTimeout(() => exit(code, undefined, exitSignal), OUTPUT_GRACE_MS)
    })
    // A dead child makes writes fail with EPIPE; the exit listener reports it.
    stdin.on('error', () => {})
    // Frames written in one turn of the event loop (a pipelined replay refills its window after
    // each batch of answers) leave in one writev: a system call per frame costs more than the frame.
    let corked = false
    const uncork = () => {
      corked = false
      stdin.uncork()
    }
    return {
      write(frame) {
        if (!corked && typeof setImmediate === 'function') {
          corked = true
          stdin.cork()
          setImmediate(uncork)
        }
        stdin.write(frame)
      },
      onData: (listener) => void stdout.on('data', listener as (...args: never[]) => void),
      // A listener added after the exit hears of it at once (close() on a crashed process).
      onExit: (listener) => (exited ? listener(...exited) : void exitListeners.push(listener)),
      hold(busy) {
        const method = busy ? 'ref' : 'unref'
        child[method]()
        stdout[method]?.()
        stdin[method]?.()
      },
      end: () => stdin.end(),
      kill: (signal = 'SIGKILL') => void child.kill(signal),
    }
  }
}
