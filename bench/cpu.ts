/**
 * CPU time of the processes a load phase keeps busy, read from /proc (Linux;
 * elsewhere every reading is undefined and the benches leave the column out).
 *
 * Requests/s and p99 on this shared 2-core machine follow its speed, which
 * drifts by up to 1.5x from minute to minute. CPU time per request moves with
 * it too, but read for two servers in the same run it says how much work each
 * does per request, which is what a change to the code can move.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()

/**
 * User + system CPU time of `pid` in µs (all its threads), or undefined
 * without /proc. `thread` narrows it to one thread: its id, which for the
 * main thread is the process id.
 */
export function processCpuMicros(pid: number, thread?: number): number | undefined {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8')
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

/**
 * CPU time in µs of every PostgreSQL process on this machine (postmaster,
 * backends, WAL writer, checkpointer, autovacuum), or undefined when none is
 * visible (no /proc, or the server runs elsewhere). A backend that exits
 * during a phase takes its time with it, so read it around phases whose pools
 * stay open.
 */
export function postgresCpuMicros(): number | undefined {
  let dirs: string[]
  try {
    dirs = readdirSync('/proc')
  } catch {
    return undefined
  }
  let total = 0
  let seen = false
  for (const dir of dirs) {
    if (!/^\d+$/.test(dir)) continue
    try {
      if (!readFileSync(`/proc/${dir}/comm`, 'utf8').startsWith('postgres')) continue
    } catch {
      continue // exited while listing
    }
    const micros = processCpuMicros(Number(dir))
    if (micros === undefined) continue
    total += micros
    seen = true
  }
  return seen ? total : undefined
}

/** CPU µs per request of a server process (all threads, and its main thread) and of PostgreSQL over one phase. */
export interface CpuPerRequest {
  server?: number
  /** The server's main thread alone: on Node, the one that serves HTTP and so bounds the rate. */
  main?: number
  postgres?: number
}

/**
 * Runs `phase` and divides the CPU time `serverPid` (if any) and PostgreSQL
 * used meanwhile by the number of requests it reports.
 */
export async function measureCpu<T>(
  serverPid: number | undefined,
  phase: () => Promise<T>,
  requestsOf: (result: T) => number,
): Promise<{ result: T; cpu: CpuPerRequest }> {
  const read = () => ({
    server: serverPid === undefined ? undefined : processCpuMicros(serverPid),
    main: serverPid === undefined ? undefined : processCpuMicros(serverPid, serverPid),
    postgres: postgresCpuMicros(),
  })
  const before = read()
  const result = await phase()
  const after = read()
  const requests = requestsOf(result)
  const per = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b < a || !requests ? undefined : (b - a) / requests)
  return { result, cpu: { server: per(before.server, after.server), main: per(before.main, after.main), postgres: per(before.postgres, after.postgres) } }
}
