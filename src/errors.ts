/**
 * The one error type of the core. Every failure a handler can report is an
 * `EpisodicError` with a code; `statusOf` maps the code to an HTTP status, and
 * `errorResponse` (src/http/errors.ts) turns anything thrown into a
 * `{ "error": message }` body without leaking SQL, stacks or secrets (unknown
 * errors become a generic 500). The object store answers in S3's own error
 * format instead (`s3-error.ts`; a store call the API makes fails with a
 * `StorageError`, which `fromStorageError` maps to an `EpisodicError`), and
 * the replay side has its own error classes (`NpzError`, `MetricsError`):
 * none of these is an HTTP answer of this API.
 *
 * @example
 * throw new EpisodicError('not_found', 'episode not found')
 */
export type ErrorCode =
  | 'invalid' // 400: body is not JSON or fails validation
  | 'unauthorized' // 401: key missing, malformed, unknown or revoked
  | 'not_found' // 404: unknown, foreign or malformed id
  | 'conflict' // 409: state forbids the change (archived episode, finalized run)
  | 'unprocessable' // 422: an Idempotency-Key reused with another request
  | 'too_large' // 413: body over the documented limit
  | 'unsupported_media_type' // 415: an API body declared as anything but JSON
  | 'rate_limited' // 429: too many requests from one address or key (Retry-After says when to retry)
  | 'internal' // 500: database or storage failure

/** The HTTP statuses an `ErrorCode` maps to. */
export type ErrorStatus = 400 | 401 | 404 | 409 | 413 | 415 | 422 | 429 | 500

const STATUS: Record<ErrorCode, ErrorStatus> = {
  invalid: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
}

/** An error with a code the HTTP layer maps to a status (see `statusOf`); its message becomes the `{ "error": ... }` body, except for `internal` (a generic message; the cause is logged). */
export class EpisodicError extends Error {
  /** Always `'EpisodicError'`, so the error can be matched by name across bundles. */
  override readonly name = 'EpisodicError'
  /** `code` picks the status; `cause` is logged for `internal`; `retryAfterSeconds` sets Retry-After on `rate_limited`; `headers` go on the answer. */
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; retryAfterSeconds?: number; headers?: Record<string, string> },
  ) {
    super(message, options)
    this.retryAfterSeconds = options?.retryAfterSeconds
    this.headers = options?.headers ?? {}
  }

  /** For `rate_limited`: seconds until a retry can succeed (the Retry-After header). */
  readonly retryAfterSeconds: number | undefined
  /** More headers of the answer (the `RateLimit-*` ones of a `rate_limited`). */
  readonly headers: Record<string, string>

  /** The HTTP status of `code`. */
  get status(): ErrorStatus {
    return STATUS[this.code]
  }
}

/** HTTP status for an error code. */
export function statusOf(code: ErrorCode): number {
  return STATUS[code]
}
