import { createHash } from 'node:crypto'
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync, writeSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigurationError, TransportError } from '../../src/client/errors.ts'
import type { PutRequest } from '../../src/client/uploads.ts'
import { nodeUploadTransport } from './upload-transport.ts'

interface Received {
  headers: IncomingMessage['headers']
  md5: string
  size: number
}

describe('nodeUploadTransport', () => {
  let dir: string
  let file: string
  let bytes: Buffer
  let server: Server
  let base: string
  const received: Received[] = []
  /** How the server answers the next PUT. */
  let answer: { status: number; body: string } = { status: 200, body: '' }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'episodic-put-'))
    file = join(dir, 'run.mp4')
    bytes = Buffer.alloc(3 * 1024 * 1024 + 17)
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff
    writeFileSync(file, bytes)
    server = createServer((req, res) => {
      const md5 = createHash('md5')
      let size = 0
      req.on('data', (chunk: Buffer) => (md5.update(chunk), (size += chunk.length)))
      req.on('end', () => {
        received.push({ headers: req.headers, md5: md5.digest('hex'), size })
        res.writeHead(answer.status, answer.status === 200 ? { etag: `"${size}"` } : { 'content-type': 'application/xml' }).end(answer.body)
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => {
    server.closeAllConnections()
    server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex')
  const request = (body: Blob, offset: number, length: number, extra: Partial<PutRequest> = {}) => {
    let counted = 0
    const put: PutRequest = { url: `${base}/object?X-Amz-Signature=x`, body, offset, length, onBytes: (n) => (counted += n), ...extra }
    return { put, counted: () => counted }
  }

  it('PUTs a range of a file it opened, with its length, type and no Authorization header, counting every byte', async () => {
    answer = { status: 200, body: '' }
    const transport = nodeUploadTransport()
    const blob = await transport.open(file)
    const offset = 1024 * 1024 + 5
    const length = 2 * 1024 * 1024
    const { put, counted } = request(blob, offset, length, { contentType: 'video/mp4' })
    const result = await transport.put(put)
    expect(result).toEqual({ status: 200, etag: `"${length}"`, code: null, message: '' })
    const got = received.at(-1)!
    expect(got).toMatchObject({ size: length, md5: md5(bytes.subarray(offset, offset + length)) })
    expect(got.headers).toMatchObject({ 'content-length': String(length), 'content-type': 'video/mp4' })
    expect(got.headers.authorization).toBeUndefined()
    expect(counted()).toBe(length)
  })

  it('streams a Blob it did not open (the Web path), and an empty range', async () => {
    answer = { status: 200, body: '' }
    const transport = nodeUploadTransport()
    const blob = new Blob([new Uint8Array(bytes.subarray(0, 1000))])
    const { put, counted } = request(blob, 10, 900)
    expect((await transport.put(put)).status).toBe(200)
    expect(received.at(-1)).toMatchObject({ size: 900, md5: md5(bytes.subarray(10, 910)) })
    expect(counted()).toBe(900)
    const opened = await transport.open(file)
    expect((await transport.put(request(opened, 0, 0).put)).status).toBe(200)
    expect(received.at(-1)!.size).toBe(0)
  })

  it("returns object storage's refusal with its S3 code and message", async () => {
    answer = { status: 403, body: '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>' }
    const transport = nodeUploadTransport()
    const result = await transport.put(request(await transport.open(file), 0, 1000).put)
    expect(result).toEqual({ status: 403, etag: null, code: 'AccessDenied', message: 'AccessDenied: Request has expired' })
  })

  it('throws TransportError when nothing answers, and the reason when aborted', async () => {
    const transport = nodeUploadTransport()
    const blob = await transport.open(file)
    const down = transport.put({ ...request(blob, 0, 1000).put, url: 'http://127.0.0.1:9/object' })
    await expect(down).rejects.toBeInstanceOf(TransportError)
    await expect(down).rejects.toThrow(/network failure talking to http:\/\/127\.0\.0\.1:9/)
    const stop = new AbortController()
    const reason = new Error('stopped by the user')
    stop.abort(reason)
    await expect(transport.put(request(blob, 0, 1000, { signal: stop.signal }).put)).rejects.toBe(reason)
  })

  it('fails a PUT that moves no byte for stallMs as a network failure (so it is retried), not waiting forever', async () => {
    // A store that takes the connection and never reads or answers.
    const silent = createServer(() => {})
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
    try {
      const transport = nodeUploadTransport({ stallMs: 300 })
      const started = Date.now()
      const put = { ...request(await transport.open(file), 0, 1000).put, url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/object` }
      await expect(transport.put(put)).rejects.toThrow(/network failure talking to .* \(ETIMEDOUT\)/)
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      silent.closeAllConnections()
      silent.close()
    }
  })

  it('opens a file of 4 GiB and more with its true size and reads its last bytes (Node 20 openAsBlob wraps it)', async () => {
    answer = { status: 200, body: '' }
    const big = join(dir, 'big.npz')
    const size = 2 ** 32 + 1000
    const tail = Buffer.from('the last bytes of a sparse 4 GiB file')
    const fd = openSync(big, 'w')
    try {
      ftruncateSync(fd, size)
      writeSync(fd, tail, 0, tail.length, size - tail.length)
    } finally {
      closeSync(fd)
    }
    try {
      const transport = nodeUploadTransport()
      const blob = await transport.open(big)
      expect(blob.size).toBe(size)
      expect(await blob.slice(-tail.length).text()).toBe(tail.toString())
      const { put } = request(blob, size - tail.length, tail.length)
      expect((await transport.put(put)).status).toBe(200)
      expect(received.at(-1)).toMatchObject({ size: tail.length, md5: md5(tail) })
    } finally {
      rmSync(big, { force: true })
    }
  })

  it('refuses a folder when it is opened, naming it', async () => {
    await expect(nodeUploadTransport().open(dir)).rejects.toThrow(`${dir} is a folder`)
  })

  it('fails at once, without a retry, when the file gets shorter while it is sent', async () => {
    answer = { status: 200, body: '' }
    const shrinking = join(dir, 'shrinking.npz')
    writeFileSync(shrinking, bytes)
    const transport = nodeUploadTransport()
    const blob = await transport.open(shrinking)
    truncateSync(shrinking, 1000)
    const error = await transport.put(request(blob, 0, blob.size).put).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toBe(`${shrinking} changed while it was uploaded (${bytes.length - 1000} bytes short); upload it again`)
  })
})
