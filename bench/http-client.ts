/**
 * A lean HTTP/1.1 keep-alive client for the load benches, in the spirit of
 * wrk and autocannon: one request in flight per connection, the request
 * written as one string, the reply parsed straight off the socket.
 *
 * Why not node:http: its client spent ~125 us of CPU a request here, on the
 * same 2 cores the server and PostgreSQL need, so the load generator itself
 * capped what any server could show. This one spends a fraction of that.
 */
import { connect, type Socket } from 'node:net'

export interface Reply {
  status: number
  body: string
}

class Connection {
  readonly #socket: Socket
  #buffer: Buffer = Buffer.alloc(0)
  #pending: { resolve(reply: Reply): void; reject(error: Error): void } | undefined
  /** False once the server has closed the connection (idle keep-alive timeout) or it failed. */
  alive = true

  constructor(host: string, port: number) {
    this.#socket = connect({ host, port, noDelay: true })
    this.#socket.on('data', (chunk) => this.#onData(chunk))
    const fail = (error: Error) => {
      this.alive = false
      this.#pending?.reject(error)
      this.#pending = undefined
    }
    this.#socket.on('error', fail)
    this.#socket.on('end', () => fail(new Error('connection closed by the server')))
    this.#socket.on('close', () => fail(new Error('connection closed')))
  }

  send(request: string): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject }
      this.#socket.write(request)
    })
  }

  close(): void {
    this.#socket.destroy()
  }

  #onData(chunk: Buffer): void {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk
    const headEnd = this.#buffer.indexOf('\r\n\r\n')
    if (headEnd < 0) return
    const head = this.#buffer.toString('latin1', 0, headEnd)
    const status = Number(head.slice(9, 12))
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    let body: string
    let used: number
    if (length) {
      used = headEnd + 4 + Number(length[1])
      if (this.#buffer.length < used) return
      body = this.#buffer.toString('utf8', headEnd + 4, used)
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const parsed = dechunk(this.#buffer, headEnd + 4)
      if (!parsed) return
      ;({ body, used } = parsed)
    } else {
      throw new Error(`reply without content-length or chunked encoding: ${head}`)
    }
    this.#buffer = this.#buffer.subarray(used)
    const pending = this.#pending
    this.#pending = undefined
    pending?.resolve({ status, body })
  }
}

/** The body of a chunked reply starting at `at`, or undefined while incomplete. */
function dechunk(buffer: Buffer, at: number): { body: string; used: number } | undefined {
  const parts: Buffer[] = []
  for (let p = at;;) {
    const lineEnd = buffer.indexOf('\r\n', p)
    if (lineEnd < 0) return undefined
    const size = parseInt(buffer.toString('latin1', p, lineEnd), 16)
    if (size === 0) {
      const end = buffer.indexOf('\r\n\r\n', lineEnd)
      return end < 0 ? undefined : { body: Buffer.concat(parts).toString('utf8'), used: end + 4 }
    }
    if (buffer.length < lineEnd + 2 + size + 2) return undefined
    parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size))
    p = lineEnd + 2 + size + 2
  }
}

/** Keep-alive connections to one server, handed out one request at a time. */
export class HttpPool {
  readonly #host: string
  readonly #port: number
  readonly #authority: string
  readonly #idle: Connection[] = []
  readonly #all: Connection[] = []

  constructor(baseUrl: string) {
    const url = new URL(baseUrl)
    this.#host = url.hostname
    this.#port = Number(url.port || 80)
    this.#authority = url.host
  }

  /** POSTs JSON with an API key; resolves with the parsed reply, rejects on >= 300. */
  async postJson(path: string, key: string, body: string): Promise<any> {
    const request = `POST ${path} HTTP/1.1\r\nhost: ${this.#authority}\r\nauthorization: Bearer ${key}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    let connection = this.#idle.pop()
    while (connection && !connection.alive) connection = this.#idle.pop()
    connection ??= this.#open()
    const reply = await connection.send(request)
    this.#idle.push(connection)
    if (reply.status >= 300) throw new Error(`${reply.status} ${reply.body}`)
    return JSON.parse(reply.body)
  }

  close(): void {
    for (const connection of this.#all) connection.close()
  }

  #open(): Connection {
    const connection = new Connection(this.#host, this.#port)
    this.#all.push(connection)
    return connection
  }
}
