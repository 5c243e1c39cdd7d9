/**
 * Exit codes of the `episodic` command, documented in `--help` and
 * docs/hardening.md: they say who erred. Usage and configuration mistakes
 * (the caller's) differ from auth and transport failures, and 1 is kept for
 * what nobody asked for (a bug, a server error), so scripts and CI gates can
 * tell them apart.
 */
import { credentialsPath, NO_API_KEY } from '../client/config.ts'
import { AuthError, ConfigurationError, EpisodicClientError, NotFoundError, TransportError } from '../client/errors.ts'

export const EXIT = {
  ok: 0,
  /** Anything unexpected (a bug, a server error). */
  failure: 1,
  /** Wrong flags or arguments: a malformed id, or one naming no client, key, episode or webhook. */
  usage: 2,
  /**
   * Missing or invalid configuration (credentials, env, files), a client
   * that already exists, a data folder or port in use.
   */
  config: 3,
  /** The API key was refused, or an id the key's client does not have (a 404: unknown and foreign look alike). */
  auth: 4,
  /** Network failure talking to the service, PostgreSQL or object storage. */
  transport: 5,
  /** `replay run --fail-on-hold` and the verdict was `hold`. */
  hold: 6,
  /** `replay run --fail-on-hold` and the verdict was `inconclusive` (too little evidence either way). */
  inconclusive: 7,
  /** `replay run` where every episode failed: nothing was compared. */
  allFailed: 8,
  /** Ctrl-C (SIGINT), as shells report a death by that signal. */
  interrupted: 130,
} as const

/** A failure the CLI reports as one line and an exit code (no stack). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
  }
}

/**
 * A usage mistake: one line, then where to read more (never the whole help).
 *
 * @example
 * throw usageError('keys create: --client NAME is required', 'keys')
 * // episodic: keys create: --client NAME is required
 * // see episodic keys --help
 */
export const usageError = (message: string, topic?: string) => new CliError(`${message}\nsee episodic ${topic ? `${topic} ` : ''}--help`, EXIT.usage)
export const configError = (message: string) => new CliError(message, EXIT.config)

/**
 * A client library error as the `replay` and `upload` verbs report it: one
 * line, and the exit code that says who erred. A `404` is the caller's (an id
 * that is unknown or another client's, which the service does not tell
 * apart), so it exits 4 like a refused key. Anything else passes through.
 */
export function clientCliError(error: unknown, env: Record<string, string | undefined> = {}): unknown {
  if (!(error instanceof EpisodicClientError)) return error
  // The library names its options (apiKey); the command line has variables and flags.
  if (error instanceof ConfigurationError && error.message.startsWith(NO_API_KEY)) {
    const file = credentialsPath(env) ?? '~/.config/episodic/credentials'
    return new CliError(`${NO_API_KEY}: set EPISODIC_API_KEY or --profile NAME (a profile with api_key in ${file})`, EXIT.config)
  }
  if (error instanceof ConfigurationError) return new CliError(error.message, EXIT.config)
  if (error instanceof AuthError) return new CliError(`authentication failed: ${error.message}`, EXIT.auth)
  if (error instanceof NotFoundError) return new CliError(`not found (unknown, or not this key's client): ${error.message}`, EXIT.auth)
  if (error instanceof TransportError) return new CliError(error.message, EXIT.transport)
  return new CliError(`${error.name}: ${error.message}`, EXIT.failure)
}
