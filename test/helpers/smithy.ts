/**
 * Smithy's whole presign of an S3 URL, with the S3 conventions the episodic
 * presigner follows (path as written, UNSIGNED-PAYLOAD, host and content-type
 * signed as headers): the reference that src/storage/sigv4.test.ts checks the
 * presigner against and bench/presign times it against.
 */
import { getCanonicalQuery, SignatureV4 } from '@smithy/signature-v4'
import type { Sha256Ctor } from '../../src/crypto.ts'

export interface BareRequest {
  method: string
  url: string
  contentType?: string
  now: Date
  expiresInSeconds: number
}

const PAYLOAD_HEADER = 'x-amz-content-sha256'

/** A bare SignatureV4 for these credentials (region `auto`, service `s3`); `presign` resolves with smithy's signed request. */
export function bareSmithy(credentials: { accessKeyId: string; secretAccessKey: string }, sha256: Sha256Ctor) {
  const signer = new SignatureV4({ credentials, region: 'auto', service: 's3', sha256: sha256 as never, uriEscapePath: false, applyChecksum: false })
  return (r: BareRequest) => {
    const [, protocol, authority, path] = /^(\w+:)\/\/([^/]+)(.*)$/.exec(r.url)!
    const host = authority!.toLowerCase()
    const headers: Record<string, string> = { host }
    if (r.contentType !== undefined) headers['content-type'] = r.contentType
    const signedNames = new Set(Object.keys(headers))
    return signer.presign(
      { method: r.method, protocol: protocol!, hostname: host, path: path!, query: {}, headers: { ...headers, [PAYLOAD_HEADER]: 'UNSIGNED-PAYLOAD' } },
      {
        signingDate: r.now,
        expiresIn: r.expiresInSeconds,
        signableHeaders: signedNames,
        unsignableHeaders: new Set([PAYLOAD_HEADER]),
        unhoistableHeaders: new Set([...signedNames, PAYLOAD_HEADER]),
      },
    )
  }
}

/** The URL a signed request stands for, as the presigner writes it (canonical query, then the signature). */
export function urlOfSigned(r: BareRequest, signed: { query?: Record<string, unknown> }): string {
  const [, origin, path] = /^(\w+:\/\/[^/]+)(.*)$/.exec(r.url)!
  const { ['X-Amz-Signature']: signature, ...rest } = signed.query as Record<string, string>
  return `${origin}${path}?${getCanonicalQuery({ query: rest } as never)}&X-Amz-Signature=${signature}`
}
