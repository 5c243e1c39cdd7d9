/**
 * SigV4 query-string presigning (the scheme of S3, R2 and MinIO presigned
 * URLs) on top of `@smithy/signature-v4`, with a synchronous SHA-256 injected
 * as a constructor. WebCrypto's async digest is deliberately not used here:
 * presigning does a dozen small HMACs and was measured ~7x slower with it.
 *
 * S3 conventions, as in the S3 API reference example: the payload is
 * `UNSIGNED-PAYLOAD` and is not hoisted into the query, signed headers
 * (`host`, `content-type` for uploads) stay headers the uploader must send,
 * and the path is signed exactly as written (`uriEscapePath: false`).
 *
 * Smithy signs the first URL of each shape in each second; the others of that
 * second are signed over smithy's canonical request with their own path
 * (`Template`), which took a URL from ~27 to ~10 µs here, and to ~6.5 µs
 * where the hash has one-shot forms (`Sha256Ctor.oneShot`, node:crypto):
 * then a template URL is two synchronous native calls, no hash objects.
 */
import { Sha256 } from '@aws-crypto/sha256-js'
import { ALGORITHM_IDENTIFIER, SignatureV4, getCanonicalQuery } from '@smithy/signature-v4'
import { toHex, type Sha256Ctor, type Sha256OneShot } from '../crypto.ts'
import { EpisodicError } from '../errors.ts'

/** Payload hash of every S3 presigned URL: the body is not part of the signature. */
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'

/** Longest lifetime SigV4 allows for a presigned URL (7 days). */
export const MAX_EXPIRES_SECONDS = 604_800

const PAYLOAD_HEADER = 'x-amz-content-sha256'
// smithy only reads it (`has`).
const UNSIGNABLE = new Set([PAYLOAD_HEADER])

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
  const Hash: Sha256Ctor = options.sha256 ?? Sha256
  const signer = new SignatureV4({
    credentials: { accessKeyId, secretAccessKey },
    region,
    service,
    // Structurally a smithy HashConstructor; the cast only bridges the two type packages.
    sha256: Hash as unknown as ConstructorParameters<typeof SignatureV4>[0]['sha256'],
    uriEscapePath: escapesPath,
    applyChecksum: false,
  })

  const fast = fastenSigner(signer, { accessKeyId, secretAccessKey }, region, service)
  // Shape of URL -> smithy's canonical request for one second (see `Template`).
  const templates = new Map<string, Template>()

  async function presign(input: PresignRequest): Promise<string> {
    const { expiresInSeconds } = input
    if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_EXPIRES_SECONDS) {
      throw new EpisodicError('internal', `presign: expiresInSeconds must be an integer in 1..${MAX_EXPIRES_SECONDS}`)
    }
    const url = splitUrl(input.url)
    const method = input.method.toUpperCase()
    const payloadHash = input.payloadHash ?? UNSIGNED_PAYLOAD
    const second = Math.floor(input.now.getTime() / 1000)
    // Only URLs whose canonical request differs from another's by the path
    // alone share a template: no query of their own, no extra headers, a path
    // signed as written.
    const shape =
      fast && !escapesPath && Object.keys(url.query).length === 0 && (input.headers === undefined || Object.keys(input.headers).length === 0)
        ? `${method}\n${url.protocol}//${url.authority}\n${input.contentType === undefined ? '-' : `+${input.contentType}`}\n${expiresInSeconds}\n${payloadHash}`
        : undefined
    const template = shape === undefined ? undefined : templates.get(shape)
    if (template !== undefined && template.second === second) return signFromTemplate(template, Hash, url, method)

    const headers: Record<string, string> = { host: url.host }
    for (const [name, value] of Object.entries(input.headers ?? {})) headers[name.toLowerCase()] = value
    if (input.contentType !== undefined) headers['content-type'] = input.contentType
    const signedNames = new Set(Object.keys(headers))
    // The payload hash travels as this header only so smithy picks it up;
    // it is neither signed as a header nor hoisted into the query.
    headers[PAYLOAD_HEADER] = payloadHash
    const signed = await signer.presign(
      { method, protocol: url.protocol, hostname: url.host, path: url.path, query: url.query, headers },
      {
        signingDate: input.now,
        expiresIn: expiresInSeconds,
        signableHeaders: signedNames,
        unsignableHeaders: UNSIGNABLE,
        unhoistableHeaders: new Set([...signedNames, PAYLOAD_HEADER]),
      },
    )
    const signature = signed.query?.['X-Amz-Signature'] as string
    const canonical = fast?.canonicalOf(signed)
    if (shape !== undefined && canonical !== undefined) {
      const learned = await learnTemplate(canonical, url.path, second, signed.query!, accessKeyId, fast!.signingKey, Hash.oneShot)
      if (learned) {
        if (templates.size >= 32) templates.clear() // shapes are few; a clear only costs one smithy call each
        templates.set(shape, learned)
      }
    }
    const query = canonical === undefined ? getCanonicalQuery(signed) : queryLineOf(canonical)
    return `${url.protocol}//${url.authority}${url.path}?${query}&X-Amz-Signature=${signature}`
  }

  return { accessKeyId, region, service, presign }
}

/** The canonical request smithy signed, by request object (see `fastenSigner`). */
const signedCanonicals = new WeakMap<object, string>()

interface SignerInternals {
  getSigningKey(credentials: unknown, region: string, shortDate: string, service?: string): Promise<Uint8Array>
  createCanonicalRequest(request: object, canonicalHeaders: unknown, payloadHash: string): string
}

/** What `fastenSigner` gives the presigner: smithy's canonical requests and its signing keys. */
interface FastenedSigner {
  canonicalOf(signed: object): string | undefined
  signingKey(shortDate: string): Promise<Uint8Array>
}

/**
 * Wraps two of smithy's (undocumented) methods, which signing three URLs per
 * open made hot:
 * - smithy's shared signing-key cache is keyed by an HMAC of the credentials,
 *   computed on every call; a presigner's credentials never change, so its
 *   own small cache keyed by date skips that HMAC;
 * - the canonical request smithy signs is kept, so the URL reuses its query
 *   instead of sorting and escaping it again, and the presigner can make a
 *   template of it (`learnTemplate`).
 * If a smithy release renames them, this returns undefined: every URL then
 * goes through smithy's whole presign, correct and only slower. The SigV4
 * vector tests pin the output either way, and a unit test that the methods
 * are still there.
 */
function fastenSigner(signer: SignatureV4, credentials: { accessKeyId: string; secretAccessKey: string }, region: string, service: string): FastenedSigner | undefined {
  const internals = signer as unknown as SignerInternals
  const { getSigningKey, createCanonicalRequest } = internals
  if (typeof getSigningKey !== 'function' || typeof createCanonicalRequest !== 'function') return undefined
  const keys = new Map<string, Promise<Uint8Array>>()
  internals.getSigningKey = function (credentials, region, shortDate, service) {
    const id = `${shortDate}\n${region}\n${service ?? ''}`
    let key = keys.get(id)
    if (key === undefined) {
      if (keys.size >= 4) keys.clear() // a new day: yesterday's keys are done with
      key = getSigningKey.call(this, credentials, region, shortDate, service)
      key.catch(() => keys.delete(id))
      keys.set(id, key)
    }
    return key
  }
  internals.createCanonicalRequest = function (request, canonicalHeaders, payloadHash) {
    const canonical = createCanonicalRequest.call(this, request, canonicalHeaders, payloadHash)
    signedCanonicals.set(request, canonical)
    return canonical
  }
  return {
    canonicalOf: (signed) => signedCanonicals.get(signed),
    signingKey: (shortDate) => internals.getSigningKey.call(signer, credentials, region, shortDate, service),
  }
}

/**
 * Smithy's canonical request for one shape of URL (method, origin, content
 * type, lifetime, payload hash) in one second, split around the path.
 *
 * Why: through smithy's whole presign a URL cost ~27 µs here, of which the
 * signature itself (one SHA-256 and one HMAC) is ~5 µs; the rest is generic
 * work (cloning the request, hoisting headers, sorting and escaping the
 * query, filtering headers) whose result is the same for every URL of an
 * open but its path. So smithy signs the first URL of each shape in each
 * second in full, and the next ones of that second reuse its canonical
 * request with their own path, and its signing key: the same bytes smithy
 * would hash, hashed and keyed the same way (see `signFromTemplate`). A unit
 * test checks the output against a bare smithy signer over many shapes,
 * paths and seconds.
 */
interface Template {
  second: number
  /** The canonical request after the path line: `\n` query, headers, signed headers, payload hash. */
  tail: string
  query: string
  longDate: string
  scope: string
  key: Uint8Array
  /** HMAC under `key` in one synchronous call, when the hash offers one (`Sha256Ctor.oneShot`). */
  hmacHex?: (data: string) => string
}

/** Splits smithy's canonical request around `path`; undefined if smithy did not sign the path as written. */
async function learnTemplate(
  canonical: string,
  path: string,
  second: number,
  query: Record<string, unknown>,
  accessKeyId: string,
  signingKey: (shortDate: string) => Promise<Uint8Array>,
  oneShot: Sha256OneShot | undefined,
): Promise<Template | undefined> {
  const pathStart = canonical.indexOf('\n') + 1
  const pathEnd = canonical.indexOf('\n', pathStart)
  const longDate = query['X-Amz-Date']
  const credential = query['X-Amz-Credential']
  if (canonical.slice(pathStart, pathEnd) !== path || typeof longDate !== 'string' || typeof credential !== 'string') return undefined
  if (!credential.startsWith(`${accessKeyId}/`)) return undefined
  const scope = credential.slice(accessKeyId.length + 1)
  // Smithy has just signed with this key: its cache answers at once.
  const key = await signingKey(longDate.slice(0, 8))
  return { second, tail: canonical.slice(pathEnd), query: queryLineOf(canonical), longDate, scope, key, hmacHex: oneShot?.hmacHex(key) }
}

/** The canonical request's third line (method, path, query, ...). */
function queryLineOf(canonical: string): string {
  const pathEnd = canonical.indexOf('\n', canonical.indexOf('\n') + 1)
  return canonical.slice(pathEnd + 1, canonical.indexOf('\n', pathEnd + 1))
}

/**
 * SigV4's string to sign over the template with `url`'s path, and its HMAC
 * under smithy's signing key: synchronously when the hash has one-shot forms
 * (node:crypto), else through hash objects.
 */
function signFromTemplate(template: Template, Hash: Sha256Ctor, url: SplitUrl, method: string): string | Promise<string> {
  const canonical = `${method}\n${url.path}${template.tail}`
  const { oneShot } = Hash
  if (oneShot !== undefined && template.hmacHex !== undefined) {
    const signature = template.hmacHex(`${ALGORITHM_IDENTIFIER}\n${template.longDate}\n${template.scope}\n${oneShot.hex(canonical)}`)
    return `${url.protocol}//${url.authority}${url.path}?${template.query}&X-Amz-Signature=${signature}`
  }
  return signThroughObjects(template, Hash, url, canonical)
}

async function signThroughObjects(template: Template, Hash: Sha256Ctor, url: SplitUrl, canonical: string): Promise<string> {
  const hash = new Hash()
  hash.update(canonical)
  const stringToSign = `${ALGORITHM_IDENTIFIER}\n${template.longDate}\n${template.scope}\n${toHex(await hash.digest())}`
  const hmac = new Hash(template.key)
  hmac.update(stringToSign)
  return `${url.protocol}//${url.authority}${url.path}?${template.query}&X-Amz-Signature=${toHex(await hmac.digest())}`
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

/** Splits an absolute URL without normalising its path; decodes the query (no `+` as space, as in SigV4). */
function splitUrl(url: string): SplitUrl {
  const match = /^([a-z][a-z0-9+.-]*:)\/\/([^/?#]+)([^?#]*)(?:\?([^#]*))?/i.exec(url)
  if (!match) throw new EpisodicError('internal', 'presign: url must be absolute')
  const [, protocol, authority, path, search] = match as unknown as [string, string, string, string, string | undefined]
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
