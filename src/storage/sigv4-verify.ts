/**
 * Server side of SigV4 query presigning, for the built-in object store: checks
 * an incoming request's X-Amz-* parameters against the presigner's scope,
 * then recomputes the signature from the request's method, path, query and
 * signed headers with the same presigner, and compares in constant time.
 * A Content-Type other than the signed one changes the canonical request, so
 * it surfaces as `SignatureDoesNotMatch`, exactly as on S3.
 */
import { timingSafeEqual } from '../crypto.ts'
import type { S3Error } from './s3-error.ts'
import { MAX_EXPIRES_SECONDS, parseQuery, type Presigner, UNSIGNED_PAYLOAD } from './sigv4.ts'

/** Outcome of `verifyPresigned`: the validity window, or the S3 error to answer with. */
export type PresignVerdict = { ok: true; signedAt: Date; expiresAt: Date } | ({ ok: false } & S3Error)

const PARAMS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature']
/** Tolerated clock skew for URLs dated in the future (S3 allows 15 minutes). */
const SKEW_MS = 15 * 60 * 1000

const fail = (status: S3Error['status'], code: S3Error['code'], message: string): PresignVerdict => ({ ok: false, status, code, message })
const badParams = (message: string) => fail(400, 'AuthorizationQueryParametersError', message)

/**
 * Verifies a request against a URL minted by `presigner`, as S3 would.
 * Missing auth parameters and expiry give 403 `AccessDenied`, a wrong key
 * 403 `InvalidAccessKeyId`, a malformed or out-of-scope parameter 400
 * `AuthorizationQueryParametersError`, any other mismatch 403
 * `SignatureDoesNotMatch`. The payload must have been signed as
 * `UNSIGNED-PAYLOAD`; only headers named in X-Amz-SignedHeaders are read.
 *
 * @example
 * const verdict = await verifyPresigned(request, presigner, clock.now())
 * if (!verdict.ok) return s3ErrorResponse(verdict)
 */
export async function verifyPresigned(request: Request, presigner: Presigner, now: Date): Promise<PresignVerdict> {
  const url = new URL(request.url)
  let query: Record<string, string | string[]>
  try {
    query = parseQuery(url.search.slice(1))
  } catch {
    return badParams('The query string is not correctly percent-encoded.')
  }
  const present = PARAMS.filter((name) => Object.hasOwn(query, name))
  // An Authorization header beside the query is ignored (S3 would refuse both at once):
  // the built-in store shares the API's origin, so a client that follows the artifact
  // route's `?redirect=1` with its API key keeps that header on the redirect.
  if (present.length < PARAMS.length) {
    return fail(
      403,
      'AccessDenied',
      present.length === 0 ? 'Access Denied' : `Query-string authentication version 4 requires the ${PARAMS.join(', ')} parameters.`,
    )
  }
  const p: Record<string, string> = {}
  for (const name of PARAMS) {
    const value = query[name]
    if (typeof value !== 'string') return badParams(`${name} must appear exactly once.`)
    p[name] = value
  }

  if (p['X-Amz-Algorithm'] !== 'AWS4-HMAC-SHA256') return badParams('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"')
  const signedAt = parseAmzDate(p['X-Amz-Date']!)
  if (!signedAt) return badParams(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`)
  const expires = /^\d{1,7}$/.test(p['X-Amz-Expires']!) ? Number(p['X-Amz-Expires']) : NaN
  if (!(expires >= 1 && expires <= MAX_EXPIRES_SECONDS)) return badParams(`X-Amz-Expires must be between 1 and ${MAX_EXPIRES_SECONDS} seconds.`)

  const [keyId, day, region, service, terminal, ...extra] = p['X-Amz-Credential']!.split('/')
  if (terminal === undefined || extra.length > 0) return badParams('Error parsing the X-Amz-Credential parameter; the Credential is mal-formed.')
  if (keyId !== presigner.accessKeyId) return fail(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.')
  if (day !== p['X-Amz-Date']!.slice(0, 8)) return badParams('Error parsing the X-Amz-Credential parameter; the date does not match X-Amz-Date.')
  if (region !== presigner.region) {
    return badParams(`Error parsing the X-Amz-Credential parameter; the region '${region}' is wrong; expecting '${presigner.region}'`)
  }
  if (service !== presigner.service || terminal !== 'aws4_request') {
    return badParams(`Error parsing the X-Amz-Credential parameter; incorrect service or terminal. This endpoint belongs to "${presigner.service}".`)
  }

  const signedHeaders = p['X-Amz-SignedHeaders']!.split(';')
  const wellFormed = signedHeaders.every((name, i) => /^[a-z0-9-]+$/.test(name) && (i === 0 || signedHeaders[i - 1]! < name))
  if (!wellFormed || !signedHeaders.includes('host')) return badParams('X-Amz-SignedHeaders must be sorted lowercase header names and include host.')

  const expiresAt = new Date(signedAt.getTime() + expires * 1000)
  if (now.getTime() + SKEW_MS < signedAt.getTime()) return fail(403, 'AccessDenied', 'Request is not valid yet')
  if (now.getTime() > expiresAt.getTime()) return fail(403, 'AccessDenied', 'Request has expired')

  const host = request.headers.get('host') ?? url.host
  // The host is spliced into the URL we re-sign: it must not smuggle in a path.
  if (!/^[^\s/?#@\\]+$/.test(host)) return fail(400, 'InvalidArgument', 'Invalid Host header.')
  const headers: Record<string, string> = {}
  for (const name of signedHeaders) if (name !== 'host') headers[name] = request.headers.get(name) ?? ''
  const expected = await presigner.presign({
    method: request.method,
    url: `${url.protocol}//${host}${url.pathname}${url.search}`,
    headers,
    payloadHash: UNSIGNED_PAYLOAD,
    now: signedAt,
    expiresInSeconds: expires,
  })
  const signature = expected.slice(expected.lastIndexOf('X-Amz-Signature=') + 'X-Amz-Signature='.length)
  if (!timingSafeEqual(signature, p['X-Amz-Signature']!)) {
    return fail(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    )
  }
  return { ok: true, signedAt, expiresAt }
}

/** `20130524T000000Z` to a Date, or null when malformed or not a real instant. */
function parseAmzDate(text: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text)
  if (!m) return null
  const date = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!))
  return date.toISOString().replace(/[-:]|\.\d{3}/g, '') === text ? date : null
}
