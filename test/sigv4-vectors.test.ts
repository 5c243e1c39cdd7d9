/**
 * The presigner against published SigV4 vectors (/work/shared/testdata/sigv4,
 * see SOURCES.md there), with both SHA-256 implementations the app injects:
 * @aws-crypto/sha256-js and the Node adapter's node:crypto wrapper.
 *
 * - s3-presign-example.json: the S3 API reference presigned GET (exact URL)
 *   and two derived presigned PUTs binding Content-Type (exact URL).
 * - aws-signing-test-suite/v4/<case>/query-*: every presigned variant.
 *   `normalize: false` cases model S3: the path is handed over already
 *   percent-encoded and signed as written (`uriEscapePath: false`).
 * - aws-sig-v4-test-suite (legacy, header auth only): run through smithy's
 *   `sign` to prove the hash wrappers, not the presigner.
 */
import { Sha256 } from '@aws-crypto/sha256-js'
import { SignatureV4 } from '@smithy/signature-v4'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import { type Sha256Ctor, toHex } from '../src/crypto.ts'
import { escapeUri } from '../src/storage/keys.ts'
import { verifyPresigned } from '../src/storage/sigv4-verify.ts'
import { createPresigner, parseQuery } from '../src/storage/sigv4.ts'

/** The vectors live in shared/ beside the repository (CI clones it that way). */
const ROOT = [
  process.env.SIGV4_VECTORS,
  fileURLToPath(new URL('../../shared/testdata/sigv4', import.meta.url)),
  '/work/shared/testdata/sigv4',
].find((dir): dir is string => Boolean(dir) && existsSync(dir!))
if (!ROOT) throw new Error('SigV4 vectors not found: set SIGV4_VECTORS or keep shared/ beside the repository')
const SUITE = join(ROOT, 'aws-signing-test-suite/v4')
const LEGACY = join(ROOT, 'aws-sig-v4-test-suite')
const read = (...parts: string[]) => readFileSync(join(...parts), 'utf8')

const HASHES: [string, Sha256Ctor][] = [
  ['@aws-crypto/sha256-js', Sha256 as unknown as Sha256Ctor],
  ['node:crypto', NodeSha256],
]

/**
 * Query cases of the newer suite a presigner cannot reproduce, with the reason.
 * None today: session tokens are signed query parameters like any other, and
 * `omit_session_token` means appending the token after signing.
 */
const QUERY_SKIPS: Record<string, string> = {}

/** Legacy header-auth cases smithy cannot reproduce, with the reason. */
const LEGACY_SKIPS: Record<string, string> = {
  'get-header-value-multiline': 'this first-vendored copy folds lines with commas; aws-c-auth later corrected it to spaces (SOURCES.md), which smithy does',
  'post-x-www-form-urlencoded-parameters':
    'its .sts/.authz were computed from another request than its .req/.creq (content-type "charset=utf8", no content-length: ' +
    'found by hashing candidates against the .sts), so no correct signer can reproduce it from the .req',
}

interface RawRequest {
  method: string
  path: string
  search: string
  headers: Record<string, string>
  body: string
}

/** Parses request.txt / .req: request line, headers (folded lines, repeats joined by ','), body. */
function parseRequest(text: string): RawRequest {
  const [head, ...rest] = text.split('\n\n')
  const [requestLine, ...lines] = head!.split('\n')
  const target = requestLine!.slice(requestLine!.indexOf(' ') + 1, requestLine!.lastIndexOf(' HTTP/'))
  const q = target.indexOf('?')
  const headers: Record<string, string> = {}
  let last = ''
  for (const line of lines) {
    if (line === '') continue
    if (/^\s/.test(line)) {
      headers[last] += `\n${line}`
      continue
    }
    const colon = line.indexOf(':')
    last = line.slice(0, colon).toLowerCase()
    const value = line.slice(colon + 1)
    headers[last] = last in headers ? `${headers[last]},${value}` : value
  }
  return {
    method: requestLine!.slice(0, requestLine!.indexOf(' ')),
    path: q < 0 ? target : target.slice(0, q),
    search: q < 0 ? '' : target.slice(q + 1),
    headers,
    body: rest.join('\n\n'),
  }
}

async function sha256Hex(Hash: Sha256Ctor, text: string): Promise<string> {
  const hash = new Hash()
  hash.update(new TextEncoder().encode(text))
  return toHex(await hash.digest())
}

/** Decoded, sorted `name=value` pairs: the query compared independently of order and escaping. */
function pairs(search: string): string[] {
  return Object.entries(parseQuery(search))
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${name}=${v}`))
    .sort()
}

describe.each(HASHES)('S3 presign vectors with %s', (_name, sha256) => {
  const s3 = JSON.parse(read(ROOT, 's3-presign-example.json'))
  const presigner = createPresigner({
    accessKeyId: s3.credentials.access_key_id,
    secretAccessKey: s3.credentials.secret_access_key,
    region: s3.region,
    service: s3.service,
    sha256,
  })
  const now = new Date('2013-05-24T00:00:00Z')

  it('reproduces the published presigned GET URL exactly', async () => {
    const v = s3.presign_query_example
    const url = await presigner.presign({ method: v.method, url: `https://${v.host}${v.canonical_uri}`, now, expiresInSeconds: v.expires })
    expect(url).toBe(v.url)
    expect(url.slice(url.indexOf('?') + 1, url.indexOf('&X-Amz-Signature='))).toBe(v.canonical_query)
    expect(await verifyPresigned(new Request(url), presigner, now)).toMatchObject({ ok: true })
  })

  const cases: any[] = s3.derived_presigned_put_content_type.cases
  it.each(cases)('reproduces the derived presigned PUT for $content_type exactly', async (v) => {
    const url = await presigner.presign({
      method: v.method,
      url: `https://examplebucket.s3.amazonaws.com${v.canonical_uri}`,
      contentType: v.content_type,
      now,
      expiresInSeconds: v.expires,
    })
    expect(url).toBe(v.url)
    expect(url.slice(url.indexOf('?') + 1, url.indexOf('&X-Amz-Signature='))).toBe(v.canonical_query)
    const put = (contentType: string) => new Request(url, { method: 'PUT', headers: { 'content-type': contentType } })
    expect(await verifyPresigned(put(v.content_type), presigner, now)).toMatchObject({ ok: true })
    expect(await verifyPresigned(put('text/plain'), presigner, now)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' })
  })
})

describe.each(HASHES)('aws-signing-test-suite v4 query (presigned) cases with %s', (_name, sha256) => {
  const names = readdirSync(SUITE).filter((name) => statSync(join(SUITE, name)).isDirectory())
  const exercised = names.filter((name) => !(name in QUERY_SKIPS))

  it('exercises every case but a short, documented skip list', () => {
    expect(names).toHaveLength(38)
    expect(Object.keys(QUERY_SKIPS).length).toBeLessThanOrEqual(2)
    expect(exercised).toHaveLength(38 - Object.keys(QUERY_SKIPS).length)
  })

  it.each(exercised)('%s', async (name) => {
    const ctx = JSON.parse(read(SUITE, name, 'context.json'))
    const req = parseRequest(read(SUITE, name, 'request.txt'))
    const creq = read(SUITE, name, 'query-canonical-request.txt').split('\n')
    const presigner = createPresigner({
      accessKeyId: ctx.credentials.access_key_id,
      secretAccessKey: ctx.credentials.secret_access_key,
      region: ctx.region,
      service: ctx.service,
      uriEscapePath: ctx.normalize,
      sha256,
    })
    // Unnormalised (S3-style) paths are signed as written, so hand them over encoded once.
    const path = ctx.normalize ? req.path : req.path.split('/').map(escapeUri).join('/')
    const token: string | undefined = ctx.credentials.token
    const tokenParam = token === undefined ? '' : `X-Amz-Security-Token=${escapeUri(token)}`
    const signedToken = token !== undefined && !ctx.omit_session_token
    const search = [req.search, signedToken ? tokenParam : ''].filter(Boolean).join('&')
    const { host, ...headers } = req.headers
    let url = await presigner.presign({
      method: req.method,
      url: `https://${host}${path}${search ? `?${search}` : ''}`,
      headers,
      payloadHash: await sha256Hex(sha256, ctx.sign_body ? req.body : ''),
      now: new Date(ctx.timestamp),
      expiresInSeconds: ctx.expiration_in_seconds,
    })
    if (token !== undefined && !signedToken) url += `&${tokenParam}`

    const query = url.slice(url.indexOf('?') + 1)
    expect(parseQuery(query)['X-Amz-Signature']).toBe(read(SUITE, name, 'query-signature.txt').trim())
    expect(query.slice(0, query.indexOf('&X-Amz-Signature='))).toBe(creq[2])
    if (!ctx.normalize) expect(url.slice(`https://${host}`.length, url.indexOf('?'))).toBe(creq[1])

    const [expectedLine] = read(SUITE, name, 'query-signed-request.txt').split('\n')
    const expectedTarget = expectedLine!.slice(expectedLine!.indexOf(' ') + 1, expectedLine!.lastIndexOf(' HTTP/'))
    const [expectedPath, expectedSearch] = expectedTarget.split('?') as [string, string]
    expect(decodeURIComponent(url.slice(`https://${host}`.length, url.indexOf('?')))).toBe(decodeURIComponent(expectedPath))
    expect(pairs(query)).toEqual(pairs(expectedSearch))
  })
})

describe.each(HASHES)('legacy aws-sig-v4-test-suite header auth through smithy sign with %s', (_name, sha256) => {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = join(dir, entry)
      if (statSync(full).isDirectory()) walk(full)
      else if (entry.endsWith('.req')) found.push(full.slice(0, -'.req'.length))
    }
  }
  walk(LEGACY)
  const exercised = found.filter((base) => !(base.split('/').pop()! in LEGACY_SKIPS))

  it('covers all 31 cases but the documented skips', () => {
    expect(found).toHaveLength(31)
    expect(Object.keys(LEGACY_SKIPS).length).toBeLessThanOrEqual(2)
    expect(exercised).toHaveLength(31 - Object.keys(LEGACY_SKIPS).length)
  })

  it.each(exercised)('%s', async (base) => {
    const req = parseRequest(readFileSync(`${base}.req`, 'utf8'))
    const { 'x-amz-date': _date, ...headers } = req.headers
    // SOURCES.md quirk: this .authz was computed without the content-length its .req has.
    if (base.endsWith('/post-x-www-form-urlencoded')) delete headers['content-length']
    const signer = new SignatureV4({
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
      region: 'us-east-1',
      service: 'service',
      sha256: sha256 as unknown as ConstructorParameters<typeof SignatureV4>[0]['sha256'],
      applyChecksum: false,
    })
    const signed = await signer.sign(
      {
        method: req.method,
        protocol: 'https:',
        hostname: headers.host!,
        path: req.path,
        query: parseQuery(req.search),
        headers,
        body: req.body === '' ? undefined : req.body,
      },
      { signingDate: new Date('2015-08-30T12:36:00Z') },
    )
    expect(signed.headers.authorization).toBe(readFileSync(`${base}.authz`, 'utf8').trim())
  })
})
