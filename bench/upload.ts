/**
 * bench/upload: a 1 GiB file through the built-in store, as a single PUT and
 * as a multipart upload with 4 parts in flight (the client library's
 * `uploadArtifact`, completion included), beside a plain streamed copy of the
 * same file on the same disk in the same run. The server runs in its own
 * process; its resident memory is sampled every 10 ms, and the table shows
 * how far it grew above its level before each upload.
 *
 * Targets (issue 18): each upload at >= 0.5x the copy's MB/s, and the
 * server's peak RSS growth under 64 MiB (bytes stream to disk, each part
 * into its place in one file that completion renames, nothing held whole).
 *
 *   npx tsx bench/upload.ts   (BENCH_UPLOAD_MIB=1024)
 */
import { execFileSync, spawn } from 'node:child_process'
import { createReadStream, createWriteStream, openAsBlob, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createInterface } from 'node:readline'
import { EpisodicClient } from '../src/client/client.ts'
import { uploadArtifact, type UploadOptions } from '../src/client/uploads.ts'
import { nodeUploadTransport } from '../adapters/node/upload-transport.ts'

const MiB = 1024 * 1024
const SIZE = Number(process.env.BENCH_UPLOAD_MIB ?? 1024) * MiB

/** Resident set of a process in bytes (Linux /proc), or NaN elsewhere. */
function rssOf(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))
    return line ? Number(line.split(/\s+/)[1]) * 1024 : NaN
  } catch {
    return NaN
  }
}

/**
 * Runs `work`, sampling `pid`'s RSS; returns seconds and the peak growth
 * above the level at the start. Dirty pages of the phase before are written
 * out first (untimed), so no phase pays for another's writeback.
 */
async function measured(pid: number, work: () => Promise<unknown>): Promise<{ seconds: number; growth: number }> {
  try {
    execFileSync('sync')
  } catch {
    // no sync(1): phases may then pay for each other's writeback
  }
  const base = rssOf(pid)
  let peak = base
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10)
  const t = performance.now()
  await work()
  const seconds = (performance.now() - t) / 1000
  clearInterval(timer)
  return { seconds, growth: Math.max(0, peak - base) }
}

/** PUTs a file with node:http, streaming it from disk with its length declared. */
function pipedPut(url: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-type': 'video/mp4', 'content-length': String(SIZE) } }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`piped PUT answered ${res.statusCode}`))))
    })
    req.on('error', reject)
    createReadStream(file, { highWaterMark: MiB }).pipe(req)
  })
}

export async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'episodic-bench-upload-'))
  const server = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(import.meta.dirname, 'upload-server.ts')], {
    env: { ...process.env, EPISODIC_DATA_DIR: join(dir, 'data'), DATABASE_URL: '', S3_ENDPOINT: '', EPISODIC_STORAGE: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: server.stdout! }).once('line', resolve)
      server.once('exit', (code) => reject(new Error(`bench server exited (${code})`)))
    })
    const { url, key } = JSON.parse(first) as { url: string; key: string }
    const file = join(dir, 'run.mp4')
    // Written in 64 MiB chunks of varied bytes (not one zero-filled buffer).
    const chunk = Buffer.alloc(64 * MiB)
    for (let i = 0; i < chunk.length; i += 4) chunk.writeUInt32LE((i * 2654435761) >>> 0, i)
    await writeFile(file, '')
    for (let written = 0; written < SIZE; written += chunk.length) {
      await writeFile(file, chunk.subarray(0, Math.min(chunk.length, SIZE - written)), { flag: 'a' })
    }

    const client = new EpisodicClient({ apiKey: key, baseUrl: url })
    const rows: [string, number, number][] = []
    const copy = await measured(server.pid!, () => pipeline(createReadStream(file, { highWaterMark: 4 * MiB }), createWriteStream(join(dir, 'copy.mp4'))))
    rows.push(['plain copy (same disk, streamed)', copy.seconds, NaN])
    await rm(join(dir, 'copy.mp4'))

    const single = await client.openEpisode({ request_uploads: ['video'] })
    const put = await measured(server.pid!, async () => {
      const blob = await openAsBlob(file)
      const reply = await client.signedPut(single.upload_urls[0]!.url, blob, { contentType: 'video/mp4' })
      if (reply.status !== 200) throw new Error(`single PUT answered ${reply.status}: ${reply.message}`)
    })
    rows.push(['single PUT (fetch, Blob body)', put.seconds, put.growth])

    // The same PUT from node:http piping the file: the store's own speed,
    // without fetch's per-chunk cost on the client side of this one machine.
    const piped = await client.openEpisode({ request_uploads: ['video'] })
    const raw = await measured(server.pid!, () => pipedPut(piped.upload_urls[0]!.url, file))
    rows.push(['single PUT (node:http, piped file)', raw.seconds, raw.growth])

    // The client library as `episodic upload` runs it: the Node transport reads the file itself.
    const transport = nodeUploadTransport()
    const library = async (multipart: boolean, put: UploadOptions['put']) => {
      const opened = await client.openEpisode({ request_uploads: [] })
      return measured(server.pid!, async () => {
        const body = put ? await transport.open(file) : await openAsBlob(file)
        const options: UploadOptions = multipart
          ? { multipartThreshold: 0, partSize: Math.ceil(SIZE / 4 / MiB) * MiB, concurrency: 4, put }
          : { multipartThreshold: SIZE, put }
        await uploadArtifact(client, { episodeId: opened.episode_id, kind: 'video', body }, options)
      })
    }
    const single2 = await library(false, transport.put)
    rows.push(['single PUT, library + Node transport', single2.seconds, single2.growth])
    const parts2 = await library(true, transport.put)
    rows.push(['multipart x4, library + Node transport', parts2.seconds, parts2.growth])
    const parts = await library(true, undefined)
    rows.push(['multipart x4, library + fetch', parts.seconds, parts.growth])

    const mbps = (seconds: number) => SIZE / 1e6 / seconds
    console.log(`${SIZE / MiB} MiB file; server RSS sampled every 10 ms`)
    console.log('path                                     MB/s    x copy   peak RSS growth')
    for (const [name, seconds, growth] of rows) {
      const ratio = mbps(seconds) / mbps(copy.seconds)
      console.log(
        `${name.padEnd(40)} ${mbps(seconds).toFixed(0).padStart(5)}   ${ratio.toFixed(2).padStart(5)}   ${
          Number.isNaN(growth) ? '-' : `${(growth / MiB).toFixed(1)} MiB`
        }`,
      )
    }
    console.log('targets: >= 0.50x copy, growth < 64 MiB')
  } finally {
    server.kill('SIGTERM')
    await new Promise((r) => server.once('exit', r))
    await rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
