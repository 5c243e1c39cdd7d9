/**
 * Exit codes of the `episodic` command, documented in `--help` and
 * docs/hardening.md: they say who erred. Usage and configuration mistakes
 * (the caller's) differ from auth and transport failures, and 1 is kept for
 * what nobody asked for (a bug, a server error), so scripts and CI gates can
 * tell them apart.
 */
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
  /** The API key was refused, or a baseline episode is not the caller's. */
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
