import { describe, expect, it } from 'vitest'
import { createS3Storage } from './s3.ts'
import { createPresigner } from './sigv4.ts'
import { verifyPresigned } from './sigv4-verify.ts'

const options = {
  endpoint: 'https://acct.r2.cloudflarestorage.com/',
  bucket: 'episodes',
  accessKeyId: 'AKIDTEST',
  secretAccessKey: 'secret/with+chars',
}
const now = new Date('2030-01-01T00:00:00.250Z')
const key = 'c1/e1/video.mp4'

describe('S3-compatible storage', () => {
  it('mints path-style presigned PUT URLs with content-type and host signed', async () => {
    const storage = createS3Storage(options)
    const { url, expiresAt } = await storage.presignPut({ key, contentType: 'video/mp4', now, expiresInSeconds: 1800, origin: 'http://ignored' })
    expect(url).toMatch(
      /^https:\/\/acct\.r2\.cloudflarestorage\.com\/episodes\/c1\/e1\/video\.mp4\?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDTEST%2F20300101%2Fauto%2Fs3%2Faws4_request&X-Amz-Date=20300101T000000Z&X-Amz-Expires=1800&X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Signature=[0-9a-f]{64}$/,
    )
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-type;host')
    expect(expiresAt.toISOString()).toBe('2030-01-01T00:30:00.000Z')
  })

  it('mints presigned GET URLs signing only host', async () => {
    const storage = createS3Storage({ ...options, region: 'us-east-1' })
    const { url } = await storage.presignGet({ key, now, expiresInSeconds: 900, origin: 'http://ignored' })
    const q = new URL(url).searchParams
    expect(q.get('X-Amz-SignedHeaders')).toBe('host')
    expect(q.get('X-Amz-Credential')).toBe('AKIDTEST/20300101/us-east-1/s3/aws4_request')
    expect(q.get('X-Amz-Expires')).toBe('900')
  })

  it('signs what an S3 server recomputes, and binds the Content-Type', async () => {
    const storage = createS3Storage(options)
    const { url } = await storage.presignPut({ key, contentType: 'video/mp4', now, expiresInSeconds: 1800, origin: '' })
    const server = createPresigner({ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret/with+chars', region: 'auto' })
    const put = (type: string) => new Request(url, { method: 'PUT', headers: { 'content-type': type } })
    expect(await verifyPresigned(put('video/mp4'), server, now)).toMatchObject({ ok: true })
    expect(await verifyPresigned(put('image/png'), server, now)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' })
  })

  it('percent-encodes keys once, per segment', async () => {
    const storage = createS3Storage(options)
    const { url } = await storage.presignGet({ key: "c1/run (1)/a+b's.npz", now, expiresInSeconds: 60, origin: '' })
    expect(url).toContain('/episodes/c1/run%20%281%29/a%2Bb%27s.npz?')
  })

  it('fills publicUrl only with a public base URL', () => {
    expect(createS3Storage(options).publicUrl(key)).toBeNull()
    expect(createS3Storage({ ...options, publicBaseUrl: 'https://cdn.example.com/' }).publicUrl(key)).toBe('https://cdn.example.com/c1/e1/video.mp4')
  })

  it('rejects lifetimes outside 1..604800 seconds', async () => {
    const storage = createS3Storage(options)
    await expect(storage.presignGet({ key, now, expiresInSeconds: 604_801, origin: '' })).rejects.toThrow(/expiresInSeconds/)
    await expect(storage.presignGet({ key, now, expiresInSeconds: 0, origin: '' })).rejects.toThrow(/expiresInSeconds/)
  })

  it('tells a missing bucket from a missing object: a HEAD 404 asks the bucket once, and a missing one is a StorageError', async () => {
    const heads: string[] = []
    const bucket = { exists: false }
    const fetch = ((request: Request) => {
      const path = new URL(request.url).pathname
      heads.push(path)
      return Promise.resolve(new Response(null, { status: path === '/episodes' ? (bucket.exists ? 200 : 404) : 404 }))
    }) as typeof globalThis.fetch
    const storage = createS3Storage({ ...options, fetch })
    await expect(storage.head!(key)).rejects.toMatchObject({
      name: 'StorageError',
      code: 'NoSuchBucket',
      message: 'bucket "episodes" does not exist at https://acct.r2.cloudflarestorage.com/ (S3_BUCKET, S3_ENDPOINT)',
    })
    bucket.exists = true
    heads.length = 0
    expect(await storage.head!(key)).toBeNull()
    expect(await storage.head!('c1/e1/actions.npz')).toBeNull()
    // The bucket is asked about until it is found, then never again.
    expect(heads).toEqual(['/episodes/c1/e1/video.mp4', '/episodes', '/episodes/c1/e1/actions.npz'])
  })
})
