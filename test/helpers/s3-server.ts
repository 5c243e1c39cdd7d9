/**
 * A real S3 server for the tests: Ceph's RADOS Gateway (Debian's `radosgw`,
 * with `ceph-mon` and `ceph-osd`), started on loopback in a temporary folder
 * as a one-node cluster whose OSD keeps its objects in memory. RGW checks
 * SigV4 (header and query-presigned, Content-Type included) and implements
 * multipart uploads with ListParts and AbortMultipartUpload, which the npm
 * fakes (s3rver) do not: s3rver skips SigV4 signature checks and has neither.
 *
 * Install: `apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd`.
 * Without those programs the suites that need it skip loudly, except under
 * `CI=true`, where that is a failure.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { AwsClient } from 'aws4fetch'

const run = promisify(execFile)
const PROGRAMS = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'monmaptool', 'ceph']
const PATHS = ['/usr/bin', '/usr/local/bin', '/bin']
/** Where a Ceph program is installed, or null. */
const installed = (name: string) => PATHS.map((dir) => join(dir, name)).find((path) => existsSync(path)) ?? null
/** A Ceph program's path as `s3ServerAvailable` found it (so both agree), else its name. */
const bin = (name: string) => installed(name) ?? name

export interface S3Server {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  /** The variables that point the service at this bucket. */
  env: Record<string, string>
  stop(): Promise<void>
}

let warned = false

/** True when the Ceph programs are installed; throws under CI when not. */
export function s3ServerAvailable(): boolean {
  const missing = PROGRAMS.filter((name) => installed(name) === null)
  if (missing.length === 0) return true
  if (process.env.CI === 'true') {
    throw new Error(
      `the S3 server suites need ${missing.join(', ')} (apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd) but CI=true: they must not skip`,
    )
  }
  if (!warned) {
    warned = true
    console.warn(
      `\n*** SKIPPED: real S3 server suites (missing ${missing.join(', ')}; apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd) ***\n`,
    )
  }
  return false
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function until<T>(what: string, seconds: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + seconds * 1000
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const value = await attempt()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`S3 server: ${what} did not happen within ${seconds} s${last ? ` (${(last as Error).message})` : ''}`)
}

/** The last lines of a daemon's log, for the error when a start fails. */
function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return '(no log)'
  }
}

/**
 * Starts a one-node Ceph cluster with RGW on free loopback ports, a user and
 * an empty bucket (about 3 s). A start that fails is retried once in a fresh
 * folder on fresh ports; the error names the step and quotes the daemons' logs.
 */
export async function startS3Server(): Promise<S3Server> {
  try {
    return await startCluster()
  } catch (error) {
    console.warn(`S3 server: first start failed, retrying once: ${(error as Error).message}`)
    return await startCluster()
  }
}

async function startCluster(): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-rgw-'))
  const [monPort, rgwPort] = [await freePort(), await freePort()]
  const fsid = crypto.randomUUID()
  const conf = join(dir, 'ceph.conf')
  for (const sub of ['mon', 'osd', 'run', 'log']) mkdirSync(join(dir, sub))
  writeFileSync(conf, cephConf(dir, fsid, monPort, rgwPort))
  const children: ChildProcess[] = []
  const daemon = (program: string, args: string[]) => {
    const child = spawn(bin(program), ['-c', conf, '-f', ...args], { stdio: 'ignore' })
    children.push(child)
    return child
  }
  const ceph = (...args: string[]) => run(bin('ceph'), ['-c', conf, '--connect-timeout', '10', ...args], { timeout: 30_000 })
  const stop = async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null) continue
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await run(bin('monmaptool'), ['--create', '--clobber', '--fsid', fsid, '--addv', 'a', `[v1:127.0.0.1:${monPort}]`, join(dir, 'monmap')])
    await run(bin('ceph-mon'), ['-c', conf, '--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap')])
    daemon('ceph-mon', ['-i', 'a'])
    const osdId = (await until('the monitor answering', 60, async () => (await ceph('osd', 'create')).stdout.trim())) || '0'
    await run(bin('ceph-osd'), ['-c', conf, '-i', osdId, '--mkfs'], { timeout: 180_000 })
    await ceph('osd', 'crush', 'add', `osd.${osdId}`, '1.0', 'host=localhost', 'root=default')
    daemon('ceph-osd', ['-i', osdId])
    await until('the OSD coming up', 60, async () => ((await ceph('osd', 'stat')).stdout.includes('1 up') ? true : undefined))
    daemon('radosgw', ['-n', 'client.rgw'])
    const endpoint = `http://127.0.0.1:${rgwPort}`
    await until('the gateway answering', 60, async () => ((await fetch(endpoint)).ok ? true : undefined))
    const accessKeyId = 'EPISODICTEST'
    const secretAccessKey = crypto.randomUUID()
    await run(bin('radosgw-admin'), [
      '-c',
      conf,
      '-n',
      'client.rgw',
      'user',
      'create',
      '--uid=episodic',
      '--display-name=episodic',
      `--access-key=${accessKeyId}`,
      `--secret=${secretAccessKey}`,
    ], { timeout: 180_000 })
    const bucket = 'episodes'
    const region = 'us-east-1'
    const aws = new AwsClient({ accessKeyId, secretAccessKey, service: 's3', region, retries: 0 })
    await until('the bucket being created', 60, async () => ((await aws.fetch(`${endpoint}/${bucket}`, { method: 'PUT' })).ok ? true : undefined))
    const env = { S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_REGION: region, S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey }
    return { endpoint, bucket, region, accessKeyId, secretAccessKey, env, stop }
  } catch (error) {
    const logs = ['mon.a', 'osd.0', 'client.rgw'].map((name) => `--- ${name}.log\n${tail(join(dir, 'log', `${name}.log`))}`)
    await stop()
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`)
  }
}

function cephConf(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = 127.0.0.1:${monPort}
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg autoscale mode = off
osd pool default pg num = 1
osd pool default pgp num = 1
# One placement group per pool and quick map updates: RGW creates its pools
# in about 1 s instead of 9.
paxos propose interval = 0.05
mon max pg per osd = 1000
mon data avail crit = 0
mon data avail warn = 0
osd objectstore = memstore
memstore device bytes = 536870912
osd crush chooseleaf type = 0
# The OSD must not send commands of its own at boot: with a fast memstore it
# can send them before it has the monitor map, and the monitor refuses them
# ("wrong fsid"), which leaves the OSD down for good (seen in 1 start in 3).
osd crush update on start = false
osd class update on start = false
ms bind ipv6 = false
public addr = 127.0.0.1
run dir = ${dir}/run
log file = ${dir}/log/$name.log
admin socket = ${dir}/run/$name.asok
[mon.a]
mon data = ${dir}/mon
[osd.0]
osd data = ${dir}/osd
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw dns name = 127.0.0.1
`
}
