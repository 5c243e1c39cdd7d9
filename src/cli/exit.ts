/**
 * Exit codes of the `episodic` command, documented in `--help`:
 * usage and configuration mistakes differ from auth and transport failures so
 * scripts and CI gates can tell them apart.
 */
export const EXIT = {
  ok: 0,
  /** Anything unexpected (a bug, a server error). */
  failure: 1,
  /** Wrong flags or arguments. */
  usage: 2,
  /** Missing or invalid configuration (credentials, env, files). */
  config: 3,
  /** The API key was refused, or a baseline episode is not the caller's. */
  auth: 4,
  /** Network failure talking to the service or object storage. */
  transport: 5,
  /** `replay run --fail-on-hold` and the recommendation was `hold`. */
  hold: 6,
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

export const usageError = (message: string) => new CliError(message, EXIT.usage)
export const configError = (message: string) => new CliError(message, EXIT.config)
