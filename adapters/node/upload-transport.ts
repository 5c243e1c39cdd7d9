/**
 * A Node upload transport for the client library (`UploadOptions.put`):
 * files opened through it are read with Node's file streams in 1 MiB chunks
 * and piped into node:http(s), with progress counted on those chunks. The
 * Web path (a `Blob` stream through `fetch`) costs about twice the CPU per
 * byte; on one machine sharing its cores with the store that halves the
 * upload rate (docs/performance.md, "Multipart uploads").
 */
import { createReadStream } from 'node:fs'
import { open as openFile, stat } from 'node:fs/promises'
import http from 'node:http'
import https from 'node:https'
import { Readable } from 'node:stream'
import { type SignedPutResult, storageAnswer } from '../../src/client/client.ts'
import { ConfigurationError, TransportError } from '../../src/client/errors.ts'
import type { PutRequest, PutTransport } from '../../src/client/uploads.ts'

const CHUNK = 1024 * 1024

/**
 * A file on disk as a `Blob` with its true size, read lazily. Node 20's
 * `fs.openAsBlob` reports a file of 4 GiB or more with its size modulo 2^32
 * (a 4 GiB file as 0 bytes), which would upload a truncated artifact; this
 * one takes the size from `stat`. Its ranges (`slice`) stay on disk.
 */
export class DiskFile extends Blob {
  /** The range's length in bytes (the file's, from `stat`, for a whole file). */
  declare readonly size: number
  /** The MIME type given to `slice`, or `''`. */
  declare readonly type: string
  readonly #path: string
  readonly #start: number
  readonly #size: number
  readonly #type: string

  /** The bytes `start .. start + size` of the file at `path`; use `openDiskFile`. */
  constructor(path: string, start: number, size: number, type = '') {
    super([])
    this.#path = path
    this.#start = start
    this.#size = size
    this.#type = type
  }

  /** The file this range reads from. */
  get path(): string {
    return this.#path
  }

  /** Where the range starts in the file. */
  get start(): number {
    return this.#start
  }

  static {
    // Blob's size and type are getters; these answer for the range. Defined here rather than as
    // `get size()` so the .d.ts says properties, as @types/node's Blob does (without the DOM lib,
    // a consumer's tsc refused accessors overriding properties: TS2611).
    Object.defineProperties(DiskFile.prototype, {
      size: {
        get(this: DiskFile) {
          return this.#size
        },
        configurable: true,
      },
      type: {
        get(this: DiskFile) {
          return this.#type
        },
        configurable: true,
      },
    })
  }

  /** A sub-range, as `Blob.slice` (negative offsets count from the end), still read from disk. */
  override slice(start: number = 0, end: number = this.#size, contentType: string = ''): DiskFile {
    const at = (n: number) => Math.min(Math.max(n < 0 ? this.#size + n : n, 0), this.#size)
    const from = at(start)
    return new DiskFile(this.#path, this.#start + from, Math.max(at(end) - from, 0), contentType)
  }

  /** The range as a Web stream, read from the file in 1 MiB pieces. */
  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return Readable.toWeb(this.nodeStream()) as ReadableStream<Uint8Array<ArrayBuffer>>
  }

  /** The range read whole into memory (for small files; uploads stream instead). */
  override async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = new Uint8Array(this.#size)
    const file = await openFile(this.#path, 'r')
    try {
      for (let done = 0; done < bytes.length;) {
        const { bytesRead } = await file.read(bytes, done, bytes.length - done, this.#start + done)
        if (bytesRead === 0) throw new Error(`${this.#path} is shorter than when it was opened`)
        done += bytesRead
      }
    } finally {
      await file.close()
    }
    return bytes.buffer
  }

  /** The range read whole and decoded as UTF-8. */
  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer())
  }

  /** The range as a Node stream of 1 MiB reads that fails if the file ends before the range does. */
  nodeStream(): Readable {
    if (this.#size === 0) return Readable.from([])
    return exactly(createReadStream(this.#path, { start: this.#start, end: this.#start + this.#size - 1, highWaterMark: CHUNK }), this.#size, this.#path)
  }
}

/**
 * The file at `path` as a `DiskFile`; throws when it is not a regular file
 * (a folder, say), naming it.
 *
 * @example
 * const sensors = await openDiskFile('sensors.npz')
 * await uploadArtifact(client, { episodeId, kind: 'sensors', body: sensors })
 */
export async function openDiskFile(path: string): Promise<DiskFile> {
  const info = await stat(path)
  if (!info.isFile()) throw new Error(`${path} is ${info.isDirectory() ? 'a folder' : 'not a regular file'}`)
  return new DiskFile(path, 0, info.size)
}

/**
 * `source` (a file range of `length` bytes), failing when it ends short: a
 * file cut while it is sent would otherwise leave the PUT waiting for bytes
 * that never come (until the server's request timeout).
 */
function exactly(source: Readable, length: number, path: string): Readable {
  let seen = 0
  source.on('data', (chunk: Buffer) => void (seen += chunk.length))
  source.on('end', () => {
    if (seen < length) source.destroy(new ConfigurationError(`${path} changed while it was uploaded (${length - seen} bytes short); upload it again`))
  })
  return source
}

/** `nodeUploadTransport()`'s two halves: open files with `open`, send with `put`. */
export interface NodeUploadTransport {
  /** The file at `path` as a `DiskFile` (its true size; a folder is refused), whose ranges `put` reads from the file itself. */
  open(path: string): Promise<Blob>
  /** The `UploadOptions.put` to pass; a `Blob` not opened here is streamed as a Web stream instead. */
  put: PutTransport
}

/**
 * The transport `episodic upload` uses. A PUT that moves no byte for
 * `stallMs` (default 60 s) fails as a network failure, and is retried.
 *
 * @example
 * const transport = nodeUploadTransport()
 * const video = await transport.open('run.mp4')
 * await recordEpisode(client, { episode: { robot: 'arm-1' }, artifacts: { video } }, { put: transport.put })
 */
export function nodeUploadTransport(options: { stallMs?: number } = {}): NodeUploadTransport {
  const stallMs = options.stallMs ?? STALL_MS
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) }
  return {
    open: openDiskFile,
    put(request) {
      const range = request.body.slice(request.offset, request.offset + request.length)
      if (range instanceof DiskFile && range.size !== request.length) {
        // A range past the end: the file is shorter than when the upload was planned.
        return Promise.reject(new ConfigurationError(`${range.path} is shorter than the upload expects (it changed); upload it again`))
      }
      const source = range instanceof DiskFile ? range.nodeStream() : Readable.fromWeb(range.stream() as never)
      return send(request, source, agents, stallMs)
    },
  }
}

/**
 * A PUT whose connection moves no byte either way for this long (a store that
 * stopped reading, a dead route) fails as a network failure, so the part is
 * retried with backoff instead of waiting forever.
 */
const STALL_MS = 60_000

function send(request: PutRequest, source: Readable, agents: Record<'http:' | 'https:', http.Agent>, stallMs: number): Promise<SignedPutResult> {
  const url = new URL(request.url)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new TransportError(`upload: unsupported URL scheme ${url.protocol}`))
  const headers: Record<string, string> = { 'content-length': String(request.length) }
  if (request.contentType) headers['content-type'] = request.contentType
  return new Promise((resolve, reject) => {
    const fail = (error: Error & { code?: string }) => {
      source.destroy()
      if (request.signal?.aborted) return reject(request.signal.reason)
      // The file, not the network: no retry can fix it.
      if (error instanceof ConfigurationError) return reject(error)
      reject(new TransportError(`upload: network failure talking to ${url.origin} (${error.code ?? error.message})`, { cause: error }))
    }
    const put = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: 'PUT', headers, agent: agents[url.protocol as 'http:' | 'https:'], signal: request.signal },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (text += chunk))
        response.on('error', fail)
        response.on('end', () => {
          source.destroy() // a refusal before the whole body was sent
          const etag = response.headers.etag
          resolve(storageAnswer(response.statusCode ?? 500, typeof etag === 'string' ? etag : null, text))
        })
      },
    )
    put.on('error', fail)
    put.setTimeout(stallMs, () => put.destroy(Object.assign(new Error(`no progress for ${stallMs / 1000} s`), { code: 'ETIMEDOUT' })))
    source.on('data', (chunk: Buffer) => request.onBytes(chunk.length))
    source.on('error', (error: Error & { code?: string }) => {
      put.destroy(error instanceof ConfigurationError ? error : new ConfigurationError(`cannot read the file to upload: ${error.code ?? error.message}`))
    })
    source.pipe(put)
  })
}
