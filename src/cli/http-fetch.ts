/**
 * The CLI's `fetch` for the replay client: plain GETs (API reads and artifact
 * downloads) go through `node:http`/`node:https` with keep-alive, the
 * socket's chunks handed to the body stream as they are; everything else goes
 * to the global `fetch`. Node 20's `fetch` moves a download through web
 * streams chunk by chunk: measured on bench/replay-e2e, that machinery took
 * more CPU than decoding and replaying the episodes. The client library keeps
 * using the global `fetch` on every runtime; this is passed in as its `fetch`
 * capability.
 */
import http from 'node:http'
import https from 'node:https'

const MAX_SOCKETS = 16
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
}

/** A `fetch` with the fast path described above. */
export const nodeFetch: typeof fetch = (input, init) => {
  const method = (init?.method ?? 'GET').toUpperCase()
  const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : null
  if (method !== 'GET' || init?.body != null || !url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return fetch(input, init)
  return get(url, new Headers(init?.headers), init?.signal ?? undefined, MAX_SOCKETS).then((
    response,
  ) => (response.status >= 300 && response.status < 400 ? fetch(input, init) : response))
}

function get(url: URL, headers: Headers, signal: AbortSignal | undefined, retries: number): Promise<Response> {
  return new Promise((resolve, reject) => {
    const protocol = url.protocol as 'http:' | 'https:'
    const request = (protocol === 'https:' ? https : http).get(url, { agent: agents[protocol], headers: Object.fromEntries(headers), signal }, (message) => {
      const responseHeaders = new Headers()
      for (const [name, value] of Object.entries(message.headers)) {
        if (value === undefined) continue
        for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(name, item)
      }
      const status = message.statusCode ?? 500
      // The socket's chunks go straight into the body stream: the reader (readSizedBody) copies
      // each once into its Content-Length-sized buffer, and nothing is gathered here.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          message.on('data', (chunk: Buffer) => controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length)))
          message.on('end', () => controller.close())
          message.on('error', (error) => controller.error(new TypeError('fetch failed', { cause: error })))
        },
        cancel: () => void message.destroy(),
      })
      resolve(new Response(status === 204 || status === 304 ? null : body, { status, statusText: message.statusMessage, headers: responseHeaders }))
    })
    request.on('error', (error: Error & { code?: string }) => {
      // A kept-alive socket the server closed while idle fails as soon as it is reused; a GET is
      // safe to send again (Node's documented pattern, request.reusedSocket). After a pause longer
      // than the server's keep-alive timeout (a slow policy) every idle socket is stale: each retry
      // drops one, so it ends on a fresh socket, whose failure is a real one.
      if (retries > 0 && request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        return void get(url, headers, signal, retries - 1).then(resolve, reject)
      }
      // As fetch reports network failures: a TypeError whose cause carries the system error code.
      reject(new TypeError('fetch failed', { cause: error }))
    })
  })
}
