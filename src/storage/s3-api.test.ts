import { describe, expect, it } from 'vitest'
import { createS3Api } from './s3-api.ts'

const bucket = { endpoint: 'http://s3.test', bucket: 'episodes', region: 'auto', accessKeyId: 'AK', secretAccessKey: 'SK' }

/** A bucket that takes requests and never answers: headers (or, with `headers`, the body) never come. */
function frozen(headers = false): typeof fetch {
  return ((_input: RequestInfo | URL, init?: RequestInit) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init?.signal
      if (signal?.aborted) return reject(signal.reason)
      signal?.addEventListener('abort', () => reject(signal.reason))
      // As fetch does: the request's signal errors a body still arriving.
      const body = new ReadableStream({ start: (controller) => signal?.addEventListener('abort', () => controller.error(signal.reason)) })
      if (headers) resolve(new Response(body, { status: 200 }))
    })) as typeof fetch
}

describe('createS3Api deadlines', () => {
  it('fails a call the bucket never answers after timeoutMs, naming it (instead of waiting out the HTTP stack)', async () => {
    const api = createS3Api({ ...bucket, fetch: frozen(), timeoutMs: 50 })
    const started = Date.now()
    await expect(api.headObject('c/e/sensors.npz')).rejects.toMatchObject({
      code: 'RequestTimeout',
      status: 504,
      message: 'HeadObject: the object store did not answer within 0.05 s',
    })
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it('counts the answer body in the deadline', async () => {
    const api = createS3Api({ ...bucket, fetch: frozen(true), timeoutMs: 50 })
    await expect(api.listParts('c/e/video.mp4', 'u1')).rejects.toMatchObject({
      code: 'RequestTimeout',
      message: 'ListParts: the object store did not answer within 0.05 s',
    })
  })

  it('gives CompleteMultipartUpload ten times as long (S3 may take minutes)', async () => {
    const api = createS3Api({ ...bucket, fetch: frozen(), timeoutMs: 20 })
    await expect(api.completeMultipartUpload('c/e/video.mp4', 'u1', [{ partNumber: 1, etag: 'a' }])).rejects.toMatchObject({
      message: 'CompleteMultipartUpload: the object store did not answer within 0.2 s',
    })
  })
})
