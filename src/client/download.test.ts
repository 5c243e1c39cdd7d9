import { describe, expect, it } from 'vitest'
import { readSizedBody } from './download.ts'

function streamed(chunks: number[][], headers: Record<string, string>): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(Uint8Array.from(chunk))
      controller.close()
    },
  })
  return new Response(body, { headers })
}

describe('readSizedBody', () => {
  it('fills one buffer of Content-Length bytes from the chunks, in order', async () => {
    const bytes = await readSizedBody(streamed([[1, 2], [3], [4, 5, 6]], { 'content-length': '6' }))
    expect(Array.from(bytes)).toEqual([1, 2, 3, 4, 5, 6])
    expect(bytes.buffer.byteLength).toBe(6)
  })
  it('says how many bytes came when the body ends short', async () => {
    await expect(readSizedBody(streamed([[1, 2]], { 'content-length': '5' }))).rejects.toThrow('body ended after 2 of 5 bytes')
  })
  it('refuses a body longer than its Content-Length', async () => {
    await expect(readSizedBody(streamed([[1, 2], [3, 4]], { 'content-length': '3' }))).rejects.toThrow('runs past its Content-Length of 3')
  })
  it('reads the whole body when there is no length', async () => {
    expect(Array.from(await readSizedBody(streamed([[7], [8, 9]], {})))).toEqual([7, 8, 9])
  })
})
