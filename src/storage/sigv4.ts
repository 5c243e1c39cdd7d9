/**
 * SigV4 query-string presigning (the scheme of S3, R2 and MinIO presigned
 * URLs), written out here rather than borrowed from @smithy/signature-v4: the
 * canonical request, the string to sign and the signing key, as the SigV4
 * reference describes them, over an injected synchronous SHA-256.
 * `test/sigv4-vectors.test.ts` pins the output to AWS's published vectors and
 * `sigv4.test.ts` to smithy's presign of the same requests.
 *
 * S3 conventions, as in the S3 API reference example: the payload is
 * `UNSIGNED-PAYLOAD` and is not hoisted into the query, signed headers
 * (`host`, `content-type` for uploads) stay headers the uploader must send,
 * and the path is signed exactly as written (`uriEscapePath: false`).
 * `sigv4-verify.ts` checks incoming URLs by signing them again with the same
 * presigner.
 */
import { Sha256 } from '@aws-crypto/sha256-js'
import { type Sha256Ctor, sha256Hex, toHex } from '../crypto.ts'
import { EpisodicError } from '../errors.ts'
import { escapeUri } from './keys.ts'

/** Payload hash of every S3 presigned URL: the body is not part of the signature. */
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'

/** Longest lifetime SigV4 allows for a presigned URL (7 days). */
export const MAX_EXPIRES_SECONDS = 604_800

const ALGORITHM = 'AWS4-HMAC-SHA256'

/** Credential scope and hashing of a presigner. */
export interface PresignerOptions {
  accessKeyId: string
  secretAccessKey: string
  region: string
  /** Signing name; default `s3`. */
  service?: string
  /** Synchronous SHA-256/HMAC constructor; default `Sha256` from @aws-crypto/sha256-js. */
  sha256?: Sha256Ctor
  /**
   * Normalise (`.`, `..`, `//`) and percent-encode the path before signing, as
   * every AWS service but S3 expects. Default: `service !== 's3'`.
   */
  uriEscapePath?: boolean
}

/** One URL to presign: what the eventual request must match. */
export interface PresignRequest {
  method: string
  /**
   * Absolute URL to sign. Its path is taken as written (not parsed by
   * `new URL`, which would drop dot segments); its query parameters, if
   * any, are signed along with the X-Amz-* ones.
   */
  url: string
  /** Bound into the signature as the signed `content-type` header. */
  contentType?: string
  /** Further headers to sign; the caller of the URL must send them verbatim. */
  headers?: Record<string, string>
  /** Default `UNSIGNED-PAYLOAD`; a hex SHA-256 of the body signs the body too. */
  payloadHash?: string
  now: Date
  expiresInSeconds: number
}

/** A SigV4 presigner bound to one credential scope (see `createPresigner`). */
export interface Presigner {
  readonly accessKeyId: string
  readonly region: string
  readonly service: string
  /** Returns the signed URL: canonical (sorted) query, then `X-Amz-Signature`. */
  presign(request: PresignRequest): Promise<string>
}

/**
 * Builds a presigner for one access key, region and service.
 *
 * @example
 * const signer = createPresigner({ accessKeyId, secretAccessKey, region: 'auto' })
 * const url = await signer.presign({
 *   method: 'PUT', url: 'https://acct.r2.cloudflarestorage.com/bucket/c1/e1/video.mp4',
 *   contentType: 'video/mp4', now: new Date(), expiresInSeconds: 1800,
 * })
 */
export function createPresigner(options: PresignerOptions): Presigner {
  const { accessKeyId, secretAccessKey, region } = options
  const service = options.service ?? 's3'
  const escapesPath = options.uriEscapePath ?? service !== 's3'
  const Hash: Sha256Ctor = options.sha256 ?? (Sha256 as unknown as Sha256Ctor)
  // The signing key changes once a day; keep the current day's.
  let day: { date: string; sign: Promise<(data: string) => Promise<string> | string> } | undefined

  const signerFor = (shortDate: string) => {
    if (day?.date !== shortDate) {
      const sign = signingKey(Hash, secretAccessKey, [shortDate, region, service, 'aws4_request']).then((key) => hmacHexOf(Hash, key))
      day = { date: shortDate, sign }
      sign.catch(() => (day = undefined))
    }
    return day.sign
  }

  async function presign(input: PresignRequest): Promise<string> {
    const { expiresInSeconds } = input
    if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_EXPIRES_SECONDS) {
      throw new EpisodicError('internal', `presign: expiresInSeconds must be an integer in 1..${MAX_EXPIRES_SECONDS}`)
    }
    const url = splitUrl(input.url)
    const longDate = input.now.toISOString().replace(/[-:]|\.\d{3}/g, '')
    const shortDate = longDate.slice(0, 8)
    const scope = `${shortDate}/${region}/${service}/aws4_request`

    const headers = new Map<string, string>([['host', url.host]])
    for (const [name, value] of Object.entries(input.headers ?? {})) headers.set(name.toLowerCase(), value)
    if (input.contentType !== undefined) headers.set('content-type', input.contentType)
    const names = [...headers.keys()].sort()
    const signedHeaders = names.join(';')

    const query: Record<string, string | string[]> = { ...url.query }
    query['X-Amz-Algorithm'] = ALGORITHM
    query['X-Amz-Credential'] = `${accessKeyId}/${scope}`
    query['X-Amz-Date'] = longDate
    query['X-Amz-Expires'] = String(expiresInSeconds)
    query['X-Amz-SignedHeaders'] = signedHeaders
    const canonicalQuery = canonicalQueryOf(query)

    const canonicalRequest = [
      input.method.toUpperCase(),
      escapesPath ? normalizedPath(url.path) : url.path,
      canonicalQuery,
      ...names.map((name) => `${name}:${canonicalHeaderValue(headers.get(name)!)}`),
      '',
      signedHeaders,
      input.payloadHash ?? UNSIGNED_PAYLOAD,
    ].join('\n')
    const stringToSign = `${ALGORITHM}\n${longDate}\n${scope}\n${await sha256Hex(Hash, canonicalRequest)}`
    const signature = await (await signerFor(shortDate))(stringToSign)
    return `${url.protocol}//${url.authority}${url.path}?${canonicalQuery}&X-Amz-Signature=${signature}`
  }

  return { accessKeyId, region, service, presign }
}

/** `kSigning`: HMAC chain from `AWS4` + secret over date, region, service and terminal. */
async function signingKey(Hash: Sha256Ctor, secret: string, parts: string[]): Promise<Uint8Array> {
  let key: Uint8Array | string = `AWS4${secret}`
  for (const part of parts) {
    const hmac: InstanceType<Sha256Ctor> = new Hash(key)
    hmac.update(part)
    key = await hmac.digest()
  }
  return key as Uint8Array
}

/** Hex HMAC under `key`: one synchronous call where the hash has one-shot forms (node:crypto). */
function hmacHexOf(Hash: Sha256Ctor, key: Uint8Array): (data: string) => Promise<string> | string {
  if (Hash.oneShot) return Hash.oneShot.hmacHex(key)
  return async (data) => {
    const hmac = new Hash(key)
    hmac.update(data)
    return toHex(await hmac.digest())
  }
}

/** Sorted `name=value` pairs, both escaped per RFC 3986; repeated names sorted by value. Any X-Amz-Signature is left out. */
function canonicalQueryOf(query: Record<string, string | string[]>): string {
  const pairs: string[] = []
  for (const name of Object.keys(query).map((name) => [escapeUri(name), name] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [escaped, raw] = name
    if (raw.toLowerCase() === 'x-amz-signature') continue
    const value = query[raw]!
    const values = Array.isArray(value) ? value.map((v) => `${escaped}=${escapeUri(v)}`).sort() : [`${escaped}=${escapeUri(value)}`]
    pairs.push(...values)
  }
  return pairs.join('&')
}

/** A header value as SigV4 signs it: line breaks and runs of blanks become one space, trimmed. */
function canonicalHeaderValue(value: string): string {
  return value.replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').replace(/^ | $/g, '')
}

/** The path with `.`, `..` and empty segments resolved, then escaped (non-S3 services). */
function normalizedPath(path: string): string {
  const segments: string[] = []
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') segments.pop()
    else segments.push(segment)
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`
  return escapeUri(normalized).replace(/%2F/g, '/')
}

/**
 * When a presigned URL stops working: X-Amz-Date has whole seconds, so the
 * window starts at `now` truncated to the second.
 */
export function expiryOf(input: { now: Date; expiresInSeconds: number }): Date {
  return new Date(Math.floor(input.now.getTime() / 1000) * 1000 + input.expiresInSeconds * 1000)
}

interface SplitUrl {
  protocol: string
  authority: string
  host: string
  path: string
  query: Record<string, string | string[]>
}

/** The default port of a scheme, as a suffix of the authority. */
const DEFAULT_PORT: Record<string, RegExp> = { 'http:': /:80$/, 'https:': /:443$/ }

/** Splits an absolute URL without normalising its path; decodes the query (no `+` as space, as in SigV4). */
function splitUrl(url: string): SplitUrl {
  const match = /^([a-z][a-z0-9+.-]*:)\/\/([^/?#]+)([^?#]*)(?:\?([^#]*))?/i.exec(url)
  if (!match) throw new EpisodicError('internal', 'presign: url must be absolute')
  const [, protocol, given, path, search] = match as unknown as [string, string, string, string, string | undefined]
  // A default port is not part of the Host header that fetch, browsers and
  // curl send (nor of what aws4fetch and the AWS SDKs sign), so it must not
  // be signed: `https://host:443` would otherwise never verify.
  const authority = given.replace(DEFAULT_PORT[protocol.toLowerCase()] ?? /$^/, '')
  return { protocol, authority, host: authority.toLowerCase(), path: path || '/', query: parseQuery(search ?? '') }
}

/** Query string to a map (repeated names become arrays). Throws URIError on malformed escapes. */
export function parseQuery(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {}
  for (const pair of search.split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const name = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq))
    const value = eq < 0 ? '' : decodeURIComponent(pair.slice(eq + 1))
    const prior = Object.hasOwn(query, name) ? query[name] : undefined
    // defineProperty: a `__proto__` parameter stays an ordinary entry.
    const next = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value]
    Object.defineProperty(query, name, { value: next, enumerable: true, writable: true, configurable: true })
  }
  return query
}
