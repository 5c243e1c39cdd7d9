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
  override readonly name = 'ConfigurationError'
  constructor(message: string) {
    super('configuration', message)
  }
}

/** The API key is missing, malformed, unknown or revoked (HTTP 401). */
export class AuthError extends EpisodicClientError {
  override readonly name = 'AuthError'
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
  override readonly name = 'NotFoundError'
  constructor(message: string) {
    super('not_found', message, 404)
  }
}

/** The server rejected the payload (HTTP 400 or 413), for example a metric blob. */
export class ValidationError extends EpisodicClientError {
  override readonly name = 'ValidationError'
  constructor(message: string, status = 400) {
    super('validation', message, status)
  }
}

/** The state forbids the change (HTTP 409): an archived episode, a finalized eval run. */
export class ConflictError extends EpisodicClientError {
  override readonly name = 'ConflictError'
  constructor(message: string) {
    super('conflict', message, 409)
  }
}

/** The service failed (HTTP 5xx); retrying with backoff is the caller's decision. */
export class ServerError extends EpisodicClientError {
  override readonly name = 'ServerError'
  constructor(message: string, status: number) {
    super('server', message, status)
  }
}

/** The network failed (connection refused, reset, DNS) talking to the service or object storage. */
export class TransportError extends EpisodicClientError {
  override readonly name = 'TransportError'
  constructor(message: string, options?: { cause?: unknown }) {
    super('transport', message, undefined, options)
  }
}
