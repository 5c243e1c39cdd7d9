/**
 * S3-style error answers of the built-in object store: an XML body
 * `<Error><Code>..</Code><Message>..</Message></Error>` with
 * `application/xml`, so S3 clients and tools read our errors as they read
 * R2's or AWS's.
 */

/** The S3 error codes the built-in store can answer with. */
export type S3ErrorCode =
  | 'AccessDenied'
  | 'SignatureDoesNotMatch'
  | 'AuthorizationQueryParametersError'
  | 'InvalidAccessKeyId'
  | 'InvalidArgument'
  | 'NoSuchKey'
  | 'MethodNotAllowed'
  | 'IncompleteBody'
  | 'MissingContentLength'
  | 'InternalError'
  | 'EntityTooLarge'
  | 'EntityTooSmall'
  | 'InvalidPart'
  | 'InvalidPartOrder'
  | 'NoSuchUpload'
  | 'MalformedXML'
  | 'InvalidDigest'
  | 'BadDigest'
  | 'QuotaExceeded'
  | 'PreconditionFailed'

/** An S3 error: HTTP status, code and human-readable message. */
export interface S3Error {
  status: 400 | 403 | 404 | 405 | 411 | 412 | 500
  code: S3ErrorCode
  message: string
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!)
}

/**
 * The XML response for an S3 error.
 *
 * @example
 * s3ErrorResponse({ status: 404, code: 'NoSuchKey', message: 'The specified key does not exist.' })
 */
export function s3ErrorResponse(error: S3Error, headers?: Record<string, string>): Response {
  const body = '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message></Error>`
  return new Response(body, { status: error.status, headers: { 'content-type': 'application/xml', ...headers } })
}
