/**
 * The control socket: on the embedded default (PGlite) a server owns the
 * database folder (`createNodeApp` holds its lock, on Node, Deno and Bun), so
 * admin verbs run while it is up by sending one JSON line over a Unix socket
 * that only the local user can open; the server runs the same admin functions
 * on its own connection. Not an HTTP endpoint.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { AdminCall } from '../../src/admin/call.ts'
import { EpisodicError } from '../../src/errors.ts'

interface ControlInfo {
  socket: string
  pid: number
}

const infoFile = (dataDir: string) => join(dataDir, 'control.json')

/** Starts the control socket for a data folder and records where it is. */
export async function startControl(dataDir: string, call: AdminCall): Promise<{ close(): void }> {
  const digest = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16)
  const socket = join(tmpdir(), `episodic-${digest}.sock`)
  rmSync(socket, { force: true })
  const server: Server = createServer((conn) => {
    let buffer = ''
    let answered = false
    conn.setEncoding('utf8')
    conn.on('data', async (chunk) => {
      if (answered) return // one call per connection: data after its line is not another call
      buffer += chunk
      const newline = buffer.indexOf('\n')
      if (newline < 0) return
      answered = true
      let reply: unknown
      try {
        const { verb, args } = JSON.parse(buffer.slice(0, newline)) as { verb: string; args: string[] }
        reply = { ok: true, result: await call(verb, args) }
      } catch (error) {
        const code = error instanceof EpisodicError ? error.code : 'internal'
        reply = { ok: false, code, message: error instanceof Error ? error.message : String(error) }
      }
      conn.end(JSON.stringify(reply) + '\n')
    })
    conn.on('error', () => {})
  })
  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen({ path: socket, readableAll: false, writableAll: false }, done)
  })
  const info: ControlInfo = { socket, pid: process.pid }
  writeFileSync(infoFile(dataDir), JSON.stringify(info) + '\n', { mode: 0o600 })
  return {
    close() {
      server.close()
      rmSync(socket, { force: true })
      rmSync(infoFile(dataDir), { force: true })
    },
  }
}

/**
 * Sends one admin call to a running server of this data folder. Resolves
 * `undefined` when no server is running (then the caller opens the database).
 */
export async function callRunningServer(dataDir: string, verb: string, args: string[]): Promise<{ result: unknown } | undefined> {
  if (!existsSync(infoFile(dataDir))) return undefined
  let info: ControlInfo
  try {
    info = JSON.parse(readFileSync(infoFile(dataDir), 'utf8')) as ControlInfo
  } catch {
    return undefined
  }
  const reply = await new Promise<string | undefined>((done, fail) => {
    const conn = createConnection(info.socket)
    let data = ''
    conn.setEncoding('utf8')
    conn.on('connect', () => conn.write(JSON.stringify({ verb, args }) + '\n'))
    conn.on('data', (chunk) => (data += chunk))
    conn.on('end', () => done(data))
    conn.on('error', (error: NodeJS.ErrnoException) => {
      // A stale record from a server that died: no server is running.
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') done(undefined)
      else fail(error)
    })
  })
  if (reply === undefined) return undefined
  const parsed = JSON.parse(reply) as { ok: boolean; result?: unknown; code?: string; message?: string }
  if (!parsed.ok) throw new EpisodicError((parsed.code as EpisodicError['code']) ?? 'internal', parsed.message ?? 'admin call failed')
  return { result: parsed.result }
}
