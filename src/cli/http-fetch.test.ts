import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeFetch } from './http-fetch.ts'

let server: Server
let base: string
const served = new WeakMap<Socket, number>()

beforeAll(async () => {
  server = createServer((request, response) => {
    const count = (served.get(request.socket) ?? 0) + 1
    served.set(request.socket, count)
    // A server that closes kept-alive connections: the second request on a socket is cut.
    if (request.url === '/flaky' && count > 1) return void request.socket.destroy()
    const body = Buffer.from(`${request.method} ${request.url} ${request.headers.authorization ?? '-'}`)
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length, etag: '"x"' })
    response.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe('nodeFetch', () => {
  it('answers a GET with status, headers and body, sending the request headers', async () => {
    const response = await nodeFetch(`${base}/a`, { headers: { authorization: 'Bearer k' } })
    expect(response.status).toBe(200)
    expect(response.headers.get('etag')).toBe('"x"')
    expect(await response.text()).toBe('GET /a Bearer k')
  })

  it('sends a GET again on a fresh connection when a kept-alive one turns out closed', async () => {
    expect(await (await nodeFetch(`${base}/flaky`)).text()).toBe('GET /flaky -')
    expect(await (await nodeFetch(`${base}/flaky`)).text()).toBe('GET /flaky -')
  })

  it('goes on past every stale kept-alive socket (a pause longer than the server keeps idle connections)', async () => {
    // Four sockets left idle; the server then cuts each one's next request, as it does once they time out.
    const first = await Promise.all([1, 2, 3, 4].map(() => nodeFetch(`${base}/flaky`).then((r) => r.text())))
    expect(first).toEqual(Array(4).fill('GET /flaky -'))
    expect(await (await nodeFetch(`${base}/flaky`)).text()).toBe('GET /flaky -')
  })

  it('leaves other methods to the global fetch', async () => {
    expect(await (await nodeFetch(`${base}/p`, { method: 'POST', body: 'x' })).text()).toBe('POST /p -')
  })

  it('reports an unreachable server as fetch does: a TypeError whose cause has the code', async () => {
    const error = await nodeFetch('http://127.0.0.1:9/').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TypeError)
    expect((error as { cause: { code: string } }).cause.code).toBe('ECONNREFUSED')
  })
})
