/**
 * A private PostgreSQL cluster for fault tests: made with `initdb` in a temp
 * folder, on a free port, so a test can stop, crash and restart it without
 * touching the machine's shared server. Uses Debian's binaries
 * (/usr/lib/postgresql/<version>/bin, or POSTGRES_BIN / PG_BIN). As root the commands
 * run as the `postgres` user (initdb refuses root).
 *
 * When no binaries are found the suite is skipped with a loud warning,
 * except under `CI=true`, where that fails.
 */
import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { describeRequiring } from './requires.ts'

/** The newest Debian PostgreSQL bin folder with initdb, or null. */
export function postgresBin(): string | null {
  const given = process.env.POSTGRES_BIN ?? process.env.PG_BIN
  if (given) return existsSync(join(given, 'initdb')) ? given : null
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a))
  return versions.length ? join(root, versions[0]!, 'bin') : null
}

let warned = false

/** As root, initdb and the server run as `postgres` through `runuser` (util-linux), found here; null when absent. */
function runuser(): string | null {
  return ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser', '/bin/runuser'].find((path) => existsSync(path)) ?? null
}

/** Why no private cluster can be made here, or null when one can. */
function clusterMissing(): string | null {
  if (postgresBin() === null) {
    return 'no PostgreSQL binaries (initdb under /usr/lib/postgresql/*/bin) for a private cluster: install postgresql or set POSTGRES_BIN'
  }
  if (userInfo().uid === 0 && runuser() === null) return 'running as root, a private cluster needs runuser (util-linux) to run PostgreSQL as the postgres user'
  return null
}

/** True when a private cluster can be made here; throws under `CI=true` when not, warns loudly once otherwise. */
export function privateClusterAvailable(): boolean {
  const missing = clusterMissing()
  if (missing === null) return true
  if (process.env.CI === 'true') throw new Error(`${missing}, but CI=true`)
  if (!warned) {
    warned = true
    console.warn(`\n*** SKIPPED: private PostgreSQL fault tests (${missing}) ***\n`)
  }
  return false
}

/** `describe` that runs only where PostgreSQL's binaries are (see module doc). */
export function describeWithPrivateCluster(name: string, body: () => void): void {
  describeRequiring(name, clusterMissing(), body)
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer()
    server.once('error', fail)
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })
}

function id(flag: '-u' | '-g', user: string): Promise<number> {
  return new Promise((done, fail) => execFile('id', [flag, user], (error, stdout) => (error ? fail(error) : done(Number(stdout.trim())))))
}

export interface PrivateCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string
  port: number
  start(): Promise<void>
  /** `fast`: a clean shutdown; `immediate`: a crash (no checkpoint, clients cut off). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  /**
   * Sends `signal` to the postmaster and every backend: SIGSTOP freezes the
   * server (connections stay open, nothing answers: a half-open peer),
   * SIGCONT thaws it.
   */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): Promise<void>
  /** Stops the cluster and removes its folder. */
  destroy(): Promise<void>
}

/** Makes (initdb) and starts a cluster of its own. */
export async function createPrivateCluster(): Promise<PrivateCluster> {
  const bin = postgresBin()
  if (!bin) throw new Error('no PostgreSQL binaries')
  const dir = mkdtempSync(join(tmpdir(), 'episodic-pg-'))
  const data = join(dir, 'data')
  const asRoot = userInfo().uid === 0
  if (asRoot) chownSync(dir, await id('-u', 'postgres'), await id('-g', 'postgres'))
  const run = (tool: string, args: string[], timeoutMs = 120_000) =>
    new Promise<void>((done, fail) => {
      const [file, argv] = asRoot ? [runuser() ?? 'runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args]
      execFile(
        file,
        argv,
        { timeout: timeoutMs },
        (error, _stdout, stderr) => (error ? fail(new Error(`${tool} ${args.join(' ')}: ${error.message}\n${stderr}`)) : done()),
      )
    })
  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`
  const cluster: PrivateCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () => run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '120', 'start']),
    stop: (mode = 'fast') => run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '120', 'stop']),
    async signal(signal) {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
      const children = await new Promise<number[]>((done) =>
        execFile('pgrep', ['-P', String(postmaster)], (_error, stdout) => done(stdout.split(/\s+/).filter(Boolean).map(Number)))
      )
      for (const pid of [postmaster, ...children]) {
        try {
          process.kill(pid, signal)
        } catch {
          // Gone meanwhile.
        }
      }
    },
    async destroy() {
      await cluster.signal('SIGCONT').catch(() => {})
      await cluster.stop('immediate').catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await cluster.start()
  return cluster
}
