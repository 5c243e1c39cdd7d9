/**
 * Errors the client library and the replay harness raise (spec, "Client
 * library exceptions"). Each has a `code` and a distinct `name`, so callers can
 * match with `instanceof` or by name across bundles.
 *
 * @example
 * try { await createRun({ candidatePolicyVersion: 'v2', baselineEpisodeIds: ids }) }
 * catch (e) { if (e instanceof NotFoundError) console.error('a baseline is not yours') }
 */
export type ClientErrorCode = 'configuration' | 'auth' | 'not_found' | 'validation' | 'conflict' | 'server' | 'transport'

/** Base class of every client error. `status` is the HTTP status when there was one. */
export class EpisodicClientError extends Error {
  /**
   * Builds a client error; the subclasses below fix `code` and usually `status`.
   *
   * @param code which kind of failure, stable across releases (match on it or on `name`)
   * @param message what went wrong, naming the field or object
   * @param status the HTTP status of the response, when there was one
   * @param options `cause`: the underlying error (a network failure, a parse error)
   */
  constructor(
    readonly code: ClientErrorCode,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** Missing or invalid configuration: no API key, a bad base URL, no candidate version, an empty baseline list. */
export class ConfigurationError extends EpisodicClientError {
  /** Always `'ConfigurationError'`, so errors can be told apart by name across bundles. */
  override readonly name = 'ConfigurationError'
  /** Builds the error; `message` says the setting that is missing or wrong. */
  constructor(message: string) {
    super('configuration', message)
  }
}

/** The API key is missing, malformed, unknown or revoked (HTTP 401). */
export class AuthError extends EpisodicClientError {
  /** Always `'AuthError'`, so errors can be told apart by name across bundles. */
  override readonly name = 'AuthError'
  /** Builds the error; `message` says the reason the key was refused; `status` is the HTTP status (401). */
  constructor(message: string, status = 401) {
    super('auth', message, status)
  }
}

/**
 * The object does not exist or is not the caller's (HTTP 404): the service
 * does not tell the two apart, so a baseline episode of another client is a
 * NotFoundError, as is a deleted one.
 */
export class NotFoundError extends EpisodicClientError {
  /** Always `'NotFoundError'`, so errors can be told apart by name across bundles. */
  override readonly name = 'NotFoundError'
  /** Builds the error; `message` says the object that was not found. */
  constructor(message: string) {
    super('not_found', message, 404)
  }
}

/** The server rejected the payload (HTTP 400, 413, 415 or 422), for example a metric blob. */
export class ValidationError extends EpisodicClientError {
  /** Always `'ValidationError'`, so errors can be told apart by name across bundles. */
  override readonly name = 'ValidationError'
  /** Builds the error; `message` says the field the server rejected; `status` is 400, 413, 415 or 422. */
  constructor(message: string, status = 400) {
    super('validation', message, status)
  }
}

/** The state forbids the change (HTTP 409): an archived episode, a finalized eval run. */
export class ConflictError extends EpisodicClientError {
  /** Always `'ConflictError'`, so errors can be told apart by name across bundles. */
  override readonly name = 'ConflictError'
  /** Builds the error; `message` says the state that forbids the change. */
  constructor(message: string) {
    super('conflict', message, 409)
  }
}

/**
 * The service failed (HTTP 5xx) or asked to slow down (429, with
 * `retryAfterSeconds` from its `Retry-After`); retrying with backoff is the
 * caller's decision.
 */
export class ServerError extends EpisodicClientError {
  /** Always `'ServerError'`, so errors can be told apart by name across bundles. */
  override readonly name = 'ServerError'
  /**
   * Builds the error.
   *
   * @param message the server's message
   * @param status the 5xx or 429 status
   * @param retryAfterSeconds the answer's `Retry-After` in seconds, when it had one
   */
  constructor(message: string, status: number, readonly retryAfterSeconds?: number) {
    super('server', message, status)
  }
}

/** The network failed (connection refused, reset, DNS) talking to the service or object storage. */
export class TransportError extends EpisodicClientError {
  /** Always `'TransportError'`, so errors can be told apart by name across bundles. */
  override readonly name = 'TransportError'
  /** Builds the error; `message` says what failed; `cause` is the network error. */
  constructor(message: string, options?: { cause?: unknown }) {
    super('transport', message, undefined, options)
  }
}
