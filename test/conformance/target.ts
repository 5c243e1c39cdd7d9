/**
 * What the conformance suite runs against: a base URL, the `fetch` that
 * reaches it, and the operator's side (keys, archiving, deleting). The same
 * suite runs in-process on PGlite and PostgreSQL (`app.request`, no port;
 * `inProcessTarget` below) and over HTTP on each runtime
 * (test/runtimes/harness.ts). Capabilities only some targets have are
 * optional, and the tests that need them say so.
 */
import { call, type Reply } from '../helpers/http.ts'
import { type DatabaseKind, startService } from '../helpers/service.ts'

export interface Tenant {
  clientId: string
  key: string
  keyId: string
}

export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>

export interface Target {
  /** Base URL of the API; upload URLs of the built-in store live under it too. */
  url: string
  /** Reaches `url` and the signed URLs the service hands out. */
  fetch: Fetch
  /** `call` (test/helpers/http.ts) through this target's fetch. */
  call<T = any>(url: string, init?: Parameters<typeof call>[1]): Promise<Reply<T>>
  /** Creates a client with one key, as `episodic clients create` + `keys create` do. */
  newTenant(name?: string): Promise<Tenant>
  /** Revokes a key as an operator does; resolves once the service refuses it. */
  revoke(tenant: Tenant): Promise<void>
  /** `episodic episodes archive`. */
  archive(episodeId: string): Promise<void>
  /** Deletes an episode row straight in the database (what a retention job does). */
  deleteEpisode(episodeId: string): Promise<void>
  /** Moves the service's clock (in-process targets only). */
  advance?(ms: number): void
  close(): Promise<void>
}

/** Adds `call` to a target built from a fetch. */
export function withCall(target: Omit<Target, 'call'>): Target {
  return { ...target, call: (url, init) => call(url, init, (u, i) => target.fetch(u, i)) }
}

/**
 * `fetch` over HTTP that retries once when a kept-alive connection turns out
 * to be closed already (undici reports `other side closed` or EPIPE before
 * any response): a server closes the connection after answering a request
 * whose body it did not read (413, 403), and the client may reuse that socket
 * before it hears of the close. Browsers retry such requests on a fresh
 * connection too. Streamed bodies cannot be replayed and are not retried.
 */
export async function httpFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init)
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code
    const stale = code === 'UND_ERR_SOCKET' || code === 'EPIPE' || code === 'ECONNRESET'
    if (!stale || init?.body instanceof ReadableStream) throw error
    return fetch(input, init)
  }
}

/**
 * Waits until the service refuses `key` (a revocation made on another
 * connection reaches a caching server through NOTIFY, asynchronously).
 * Throws after `ms`, naming the key.
 */
export async function waitForRefusal(target: Pick<Target, 'url' | 'fetch'>, key: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const reply = await target.fetch(`${target.url}/api/episodes?limit=1`, { headers: { authorization: `Bearer ${key}` } })
    await reply.body?.cancel()
    if (reply.status === 401) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`the service still accepts the revoked key ${key.slice(0, 17)}... after ${ms} ms`)
}

/**
 * What an HTTP client puts on the wire and `app.request` does not: a
 * Content-Length for a body of known size (the store refuses uploads without
 * one with 411, as S3 does). Streamed bodies stay without it.
 */
export function withContentLength(init?: RequestInit): RequestInit | undefined {
  const body = init?.body
  const headers = new Headers(init?.headers)
  if (body === undefined || body === null || headers.has('content-length')) return init
  let length: number | undefined
  if (typeof body === 'string') length = new TextEncoder().encode(body).byteLength
  else if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) length = body.byteLength
  else if (body instanceof Blob) length = body.size
  if (length === undefined) return init
  headers.set('content-length', String(length))
  return { ...init, headers }
}

/**
 * The Node adapter's app (built-in store on disk, presign thread) on PGlite
 * or a throwaway PostgreSQL database, driven through `app.request`: no port.
 */
export async function inProcessTarget(kind: DatabaseKind): Promise<Target> {
  const svc = await startService(kind, { listen: false })
  const target: Omit<Target, 'call'> = {
    url: svc.url,
    fetch: (input, init) => Promise.resolve(svc.app.request(String(input), withContentLength(init))),
    newTenant: (name) => svc.newTenant(name),
    async revoke(tenant) {
      await svc.revoke(tenant)
      await waitForRefusal(target, tenant.key)
    },
    archive: (id) => svc.archive(id),
    async deleteEpisode(id) {
      await svc.app.deps.db.deleteFrom('episodes').where('id', '=', id).execute()
    },
    advance: (ms) => svc.advance(ms),
    close: () => svc.close(),
  }
  return withCall(target)
}
