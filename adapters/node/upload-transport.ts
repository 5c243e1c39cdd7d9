/**
 * A Node upload transport for the client library (`UploadOptions.put`):
 * files opened through it are read with Node's file streams in 1 MiB chunks
 * and piped into node:http(s), with progress counted on those chunks. The
 * Web path (a `Blob` stream through `fetch`) costs about twice the CPU per
 * byte; on one machine sharing its cores with the store that halves the
 * upload rate (docs/performance.md, "Multipart uploads").
 */
import { createReadStream, openAsBlob } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { Readable } from 'node:stream'
import { type SignedPutResult, storageAnswer } from '../../src/client/client.ts'
import { TransportError } from '../../src/client/errors.ts'
import type { PutRequest, PutTransport } from '../../src/client/uploads.ts'

const CHUNK = 1024 * 1024

/** `nodeUploadTransport()`'s two halves: open files with `open`, send with `put`. */
export interface NodeUploadTransport {
  /** A `Blob` of the file at `path` (as `fs.openAsBlob`) whose ranges `put` reads from the file itself. */
  open(path: string): Promise<Blob>
  /** The `UploadOptions.put` to pass; a `Blob` not opened here is streamed as a Web stream instead. */
  put: PutTransport
}

/**
 * The transport `episodic upload` uses.
 *
 * @example
 * const transport = nodeUploadTransport()
 * const video = await transport.open('run.mp4')
 * await recordEpisode(client, { episode: { robot: 'arm-1' }, artifacts: { video } }, { put: transport.put })
 */
export function nodeUploadTransport(): NodeUploadTransport {
  const paths = new WeakMap<Blob, string>()
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) }
  return {
    async open(path) {
      const blob = await openAsBlob(path)
      paths.set(blob, path)
      return blob
    },
    put(request) {
      const path = paths.get(request.body)
      const end = request.offset + request.length
      const source = path === undefined
        ? Readable.fromWeb(request.body.slice(request.offset, end).stream() as never)
        : request.length === 0
        ? Readable.from([])
        : createReadStream(path, { start: request.offset, end: end - 1, highWaterMark: CHUNK })
      return send(request, source, agents)
    },
  }
}

function send(request: PutRequest, source: Readable, agents: Record<'http:' | 'https:', http.Agent>): Promise<SignedPutResult> {
  const url = new URL(request.url)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new TransportError(`upload: unsupported URL scheme ${url.protocol}`))
  const headers: Record<string, string> = { 'content-length': String(request.length) }
  if (request.contentType) headers['content-type'] = request.contentType
  return new Promise((resolve, reject) => {
    const fail = (error: Error & { code?: string }) => {
      source.destroy()
      if (request.signal?.aborted) return reject(request.signal.reason)
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
    source.on('data', (chunk: Buffer) => request.onBytes(chunk.length))
    source.on('error', (error) => put.destroy(error))
    source.pipe(put)
  })
}
