import { describe, expect, it } from 'vitest'
import { Sha256 } from '@aws-crypto/sha256-js'
import { SignatureV4 } from '@smithy/signature-v4'
import { AwsV4Signer } from 'aws4fetch'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import type { Sha256Ctor } from '../crypto.ts'
import { type BareRequest, bareSmithy, urlOfSigned } from '../../test/helpers/smithy.ts'
import { encodeKeyPath, isSafeKey } from './keys.ts'
import { createPresigner, parseQuery } from './sigv4.ts'
import { verifyPresigned } from './sigv4-verify.ts'

const presigner = createPresigner({ accessKeyId: 'AK', secretAccessKey: 'SK', region: 'auto' })
const now = new Date('2030-01-01T00:00:00Z')
const mint = (url = 'http://127.0.0.1:8787/storage/a/b.npz') => presigner.presign({ method: 'GET', url, now, expiresInSeconds: 60 })

describe('verifyPresigned', () => {
  it('accepts its own URL inside the window and reports it', async () => {
    expect(await verifyPresigned(new Request(await mint()), presigner, now)).toEqual({
      ok: true,
      signedAt: now,
      expiresAt: new Date('2030-01-01T00:01:00Z'),
    })
  })

  it('reads the Host header, which the URL was signed for', async () => {
    const request = (host: string) => new Request(`http://internal:3000${new URL(url).pathname}${new URL(url).search}`, { headers: { host } })
    const url = await mint()
    expect(await verifyPresigned(request('127.0.0.1:8787'), presigner, now)).toMatchObject({ ok: true })
    expect(await verifyPresigned(request('localhost:8787'), presigner, now)).toMatchObject({ code: 'SignatureDoesNotMatch' })
    expect(await verifyPresigned(request('127.0.0.1:8787/storage'), presigner, now)).toMatchObject({ status: 400 })
  })

  it('refuses URLs dated more than 15 minutes in the future', async () => {
    const url = await mint()
    const early = new Date(now.getTime() - 16 * 60_000)
    expect(await verifyPresigned(new Request(url), presigner, early)).toMatchObject({ code: 'AccessDenied', message: 'Request is not valid yet' })
  })

  it('refuses repeated auth parameters and malformed escapes', async () => {
    const url = await mint()
    expect(await verifyPresigned(new Request(`${url}&X-Amz-Expires=604800`), presigner, now)).toMatchObject({ status: 400 })
    expect(await verifyPresigned(new Request(`${url}&bad=%E1`), presigner, now)).toMatchObject({ status: 400 })
  })

  it('signs extra query parameters, so they cannot be added or changed', async () => {
    const url = await mint('http://h/storage/k?versionId=1')
    expect(await verifyPresigned(new Request(url), presigner, now)).toMatchObject({ ok: true })
    expect(await verifyPresigned(new Request(url.replace('versionId=1', 'versionId=2')), presigner, now)).toMatchObject({ code: 'SignatureDoesNotMatch' })
    expect(await verifyPresigned(new Request(`${url}&extra=1`), presigner, now)).toMatchObject({ code: 'SignatureDoesNotMatch' })
  })
})

describe('query and key helpers', () => {
  it('parses repeated and valueless parameters without treating + as space', () => {
    expect(parseQuery('a=1&a=2&b&c=x+y%2Bz')).toEqual({ a: ['1', '2'], b: '', c: 'x+y+z' })
    expect(Object.getPrototypeOf(parseQuery('__proto__=x'))).toBe(Object.prototype)
  })

  it('encodes keys per segment and refuses unsafe ones', () => {
    expect(encodeKeyPath("c1/e 1/it's*.npz")).toBe('c1/e%201/it%27s%2A.npz')
    for (const key of ['c1/e1/video.mp4', 'a', 'a/b.c/d']) expect(isSafeKey(key)).toBe(true)
    for (const key of ['', '/abs', 'a/../b', '..', 'a//b', './a', 'a/', 'a\\b', 'a\u0000b']) expect(isSafeKey(key)).toBe(false)
  })
})

describe('presigner against smithy', () => {
  // Both ways a URL is signed: hash objects (sha256-js, WebCrypto-free
  // runtimes) and one-shot calls (node:crypto's `oneShot`).
  const hashes: [string, Sha256Ctor][] = [['sha256-js objects', Sha256 as unknown as Sha256Ctor], ['node:crypto one-shot', NodeSha256]]
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }

  it.each(hashes)('signs across days, shapes and interleaved calls exactly as smithy does (%s)', async (_, sha256) => {
    // What smithy makes of the same request, with the options the S3 presigner uses.
    const bare = bareSmithy(credentials, Sha256 as unknown as Sha256Ctor)
    const reference = async (r: BareRequest) => urlOfSigned(r, await bare(r))
    const ours = createPresigner({ ...credentials, region: 'auto', sha256 })
    const types = [undefined, 'video/mp4', 'application/octet-stream', 'text/plain; charset=utf-8', '  spaced   out  ']
    const hosts = ['https://acct.r2.cloudflarestorage.com/bucket', 'http://127.0.0.1:8787/storage', 'http://LOCALHOST:9000/b']
    // across seconds and midnights, back and forth (the signing key is kept per day)
    const days = [20, 21, 22, 20, 23]
    const requests = Array.from({ length: 200 }, (_, i) => {
      const contentType = types[i % types.length]
      return {
        method: contentType === undefined ? 'GET' : 'PUT',
        url: `${hosts[(i >> 2) % hosts.length]}/c${i % 3}/e-${i}/${['video.mp4', 'sensors.npz', encodeKeyPath("it's (1)*.npz")][i % 3]}`,
        contentType,
        now: new Date(Date.UTC(2026, 10, days[i % days.length]!, 23, 59, 58, 500) + i * 10),
        expiresInSeconds: i % 7 ? 1800 : 60,
      }
    })
    const concurrent = await Promise.all(requests.map((r) => ours.presign(r)))
    const sequential: string[] = []
    for (const r of requests) sequential.push(await ours.presign(r))
    const want = await Promise.all(requests.map(reference))
    expect(concurrent).toEqual(want)
    expect(sequential).toEqual(want)
    expect(new Set(want).size).toBe(requests.length)
  })

  it('signs a query of its own and extra headers along, as smithy does', async () => {
    const ours = createPresigner({ ...credentials, region: 'auto' })
    const url = await ours.presign({
      method: 'put',
      url: 'http://h/b/k?partNumber=2&uploadId=a%2Fb&x=1&x=0',
      headers: { 'X-Amz-Meta-Run': ' a \n b ' },
      now,
      expiresInSeconds: 60,
    })
    expect(url).toMatch(
      /^http:\/\/h\/b\/k\?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK.*&X-Amz-SignedHeaders=host%3Bx-amz-meta-run&partNumber=2&uploadId=a%2Fb&x=0&x=1&X-Amz-Signature=[0-9a-f]{64}$/,
    )
    const signer = new SignatureV4({ credentials, region: 'auto', service: 's3', sha256: Sha256, uriEscapePath: false, applyChecksum: false })
    const signed = await signer.presign(
      {
        method: 'PUT',
        protocol: 'http:',
        hostname: 'h',
        path: '/b/k',
        query: parseQuery('partNumber=2&uploadId=a%2Fb&x=1&x=0'),
        headers: { host: 'h', 'x-amz-meta-run': ' a \n b ', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
      },
      {
        signingDate: now,
        expiresIn: 60,
        signableHeaders: new Set(['host', 'x-amz-meta-run']),
        unsignableHeaders: new Set(['x-amz-content-sha256']),
        unhoistableHeaders: new Set(['host', 'x-amz-meta-run', 'x-amz-content-sha256']),
      },
    )
    expect(parseQuery(url.slice(url.indexOf('?') + 1))['X-Amz-Signature']).toBe(signed.query!['X-Amz-Signature'])
  })

  it('signs as aws4fetch does, an explicit default port left out of the signed host as fetch leaves it out of Host', async () => {
    const hosts = ['https://acct.r2.cloudflarestorage.com/bucket', 'http://127.0.0.1:8787/storage', 'https://H.example:443/b', 'http://h.example:80/b']
    const keys = ['c1/e1/video.mp4', "c/ep 1/it's (1)*.npz", 'c/é/ü~x.npz', 'c/a+b=c&d/e.npz']
    let i = 0
    for (const host of hosts) {
      for (const key of keys) {
        for (const contentType of [undefined, 'video/mp4', 'text/plain; charset=utf-8']) {
          const at = new Date(Date.UTC(2026, 10, 20, 23, 59, 58) + i++ * 1000)
          const url = `${host}/${encodeKeyPath(key)}`
          const method = contentType === undefined ? 'GET' : 'PUT'
          const ours = await createPresigner({ ...credentials, region: 'us-east-1' }).presign({ method, url, contentType, now: at, expiresInSeconds: 1800 })
          const theirs = await new AwsV4Signer({
            ...credentials,
            region: 'us-east-1',
            service: 's3',
            method,
            url: `${url}?X-Amz-Expires=1800`,
            headers: contentType === undefined ? {} : { 'content-type': contentType },
            signQuery: true,
            allHeaders: true,
            datetime: at.toISOString().replace(/[:-]|\.\d{3}/g, ''),
          }).sign()
          expect(parseQuery(ours.slice(ours.indexOf('?') + 1))['X-Amz-Signature'], `${method} ${url}`).toBe(theirs.url.searchParams.get('X-Amz-Signature'))
          // What fetch sends (Host without the default port) verifies.
          expect(
            await verifyPresigned(
              new Request(ours, { method, headers: contentType ? { 'content-type': contentType } : {} }),
              createPresigner({ ...credentials, region: 'us-east-1' }),
              at,
            ),
          )
            .toMatchObject({ ok: true })
        }
      }
    }
  })
})
