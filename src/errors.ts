/**
 * The one error type of the core. Every failure a handler can report is an
 * `EpisodicError` with a code; `statusOf` maps the code to an HTTP status, and
 * `toErrorResponse` turns anything thrown into a `{ "error": message }` body
 * without leaking SQL, stacks or secrets (unknown errors become a generic 500).
 *
 * @example
 * throw new EpisodicError('not_found', 'episode not found')
 */
export type ErrorCode =
  | 'invalid' // 400: body is not JSON or fails validation
  | 'unauthorized' // 401: key missing, malformed, unknown or revoked
  | 'forbidden' // 403: reserved for the object store's S3-style answers
  | 'not_found' // 404: unknown, foreign or malformed id
  | 'conflict' // 409: state forbids the change (archived episode, finalized run)
  | 'too_large' // 413: body over the documented limit
  | 'internal' // 500: database or storage failure

const STATUS: Record<ErrorCode, 400 | 401 | 403 | 404 | 409 | 413 | 500> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  internal: 500,
}

export class EpisodicError extends Error {
  override readonly name = 'EpisodicError'
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  get status(): 400 | 401 | 403 | 404 | 409 | 413 | 500 {
    return STATUS[this.code]
  }
}

/** HTTP status for an error code. */
export function statusOf(code: ErrorCode): number {
  return STATUS[code]
}
