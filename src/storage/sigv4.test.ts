import { describe, expect, it, vi } from 'vitest'
import { Sha256 } from '@aws-crypto/sha256-js'
import { SignatureV4 } from '@smithy/signature-v4'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import type { Sha256Ctor } from '../crypto.ts'
import { bareSmithy, urlOfSigned, type BareRequest } from '../../test/helpers/smithy.ts'
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

describe('presigner fast path', () => {
  it('still finds the smithy methods it wraps (a rename would silently cost speed, not correctness)', () => {
    const proto = SignatureV4.prototype as unknown as Record<string, unknown>
    expect(typeof proto.getSigningKey).toBe('function')
    expect(typeof proto.createCanonicalRequest).toBe('function')
  })

  // Both ways a template URL is signed: hash objects (sha256-js, WebCrypto-free
  // runtimes) and one-shot calls (node:crypto's `oneShot`).
  const hashes: [string, Sha256Ctor][] = [['sha256-js objects', Sha256 as unknown as Sha256Ctor], ['node:crypto one-shot', NodeSha256]]

  it.each(hashes)('signs across days and interleaved calls exactly as a fresh presigner does (%s)', async (_, sha256) => {
    const options = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', region: 'auto', sha256 }
    const shared = createPresigner(options)
    const request = (day: number, i: number) => ({
      method: 'PUT',
      // odd ones with a query of their own (smithy signs them), even ones from a template
      url: `https://example.r2.cloudflarestorage.com/bucket/c1/e${i}/video.mp4${i % 2 ? `?x-id=${i}` : ''}`,
      contentType: i % 2 ? 'video/mp4' : 'application/octet-stream',
      now: new Date(Date.UTC(2026, 10, day, 23, 59, 59)),
      expiresInSeconds: 1800,
    })
    // more days than the per-presigner key cache holds, signed concurrently, then revisited
    const days = [20, 21, 22, 23, 24, 25, 20, 22]
    const requests = days.flatMap((day) => [0, 1, 2, 3].map((i) => request(day, i)))
    const ours = await Promise.all(requests.map((r) => shared.presign(r)))
    const fresh = await Promise.all(requests.map((r) => createPresigner({ ...options, sha256: Sha256 }).presign(r)))
    expect(ours).toEqual(fresh)
    // one at a time, the even URLs of a day after the first come from its template
    const sequential: string[] = []
    for (const r of requests) sequential.push(await shared.presign(r))
    expect(sequential).toEqual(fresh)
    expect(new Set(ours).size).toBe(6 * 4)
  })

  it.each(hashes)('signs from templates exactly as a bare smithy signer, and calls smithy once per shape and second (%s)', async (_, sha256) => {
    const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }
    // What smithy alone makes of a request: no wrapped methods, no templates.
    const bare = bareSmithy(credentials, Sha256)
    const reference = async (r: BareRequest) => urlOfSigned(r, await bare(r))
    // Counts the one-shot calls, to show template URLs really take that path.
    let oneShotCalls = 0
    const counted = sha256.oneShot
    const Hash: Sha256Ctor = counted === undefined
      ? sha256
      : Object.assign(class extends (sha256 as new (secret?: Uint8Array | string) => InstanceType<Sha256Ctor>) {}, {
          oneShot: {
            hex: (data: string) => (oneShotCalls++, counted.hex(data)),
            hmacHex: (key: Uint8Array) => counted.hmacHex(key),
          },
        })
    const ours = createPresigner({ ...credentials, region: 'auto', sha256: Hash })
    const types = [undefined, 'video/mp4', 'application/octet-stream', 'text/plain; charset=utf-8', '  spaced   out  ']
    const hosts = ['https://acct.r2.cloudflarestorage.com/bucket', 'http://127.0.0.1:8787/storage', 'http://LOCALHOST:9000/b']
    const start = Date.UTC(2026, 10, 23, 23, 59, 58, 500)
    const requests = Array.from({ length: 400 }, (_, i) => {
      const contentType = types[i % types.length]
      return {
        method: contentType === undefined ? 'GET' : 'PUT',
        url: `${hosts[(i >> 2) % hosts.length]}/c${i % 3}/e-${i}/${['video.mp4', 'sensors.npz', encodeKeyPath("it's (1)*.npz")][i % 3]}`,
        contentType,
        // across seconds and midnight
        now: new Date(start + i * 10),
        expiresInSeconds: i % 7 ? 1800 : 60,
      }
    })
    const presign = vi.spyOn(SignatureV4.prototype, 'presign')
    try {
      const got: string[] = []
      for (const r of requests) got.push(await ours.presign(r)) // one at a time, so templates get reused
      const smithyCalls = presign.mock.calls.length
      presign.mockClear()
      const want = await Promise.all(requests.map(reference))
      expect(got).toEqual(want)
      expect(new Set(got).size).toBe(requests.length)
      // smithy signs the first URL of each shape in each second, the template the rest
      const shapes = new Set(requests.map((r) => `${r.url.split('/', 3).join('/')} ${r.contentType} ${r.expiresInSeconds} ${Math.floor(r.now.getTime() / 1000)}`))
      expect(smithyCalls).toBe(shapes.size)
      expect(smithyCalls).toBeLessThan(requests.length / 2)
      expect(oneShotCalls).toBe(counted === undefined ? 0 : requests.length - smithyCalls)
    } finally {
      presign.mockRestore()
    }
  })

  it('leaves URLs with their own query or extra headers to smithy', async () => {
    const options = { accessKeyId: 'AK', secretAccessKey: 'SK', region: 'auto' }
    const ours = createPresigner(options)
    const presign = vi.spyOn(SignatureV4.prototype, 'presign')
    try {
      for (let i = 0; i < 3; i++) await ours.presign({ method: 'GET', url: `http://h/b/k${i}?x-id=GetObject`, now, expiresInSeconds: 60 })
      for (let i = 0; i < 3; i++) await ours.presign({ method: 'PUT', url: `http://h/b/k${i}`, headers: { 'x-amz-meta-run': String(i) }, now, expiresInSeconds: 60 })
      expect(presign).toHaveBeenCalledTimes(6)
    } finally {
      presign.mockRestore()
    }
  })
})
