/**
 * The error the replay metrics throw when a policy's actions cannot be
 * compared with the recorded ones (a key returned at some steps only, a
 * value of the wrong kind, shapes that differ). A caller's mistake, not the
 * service's: it carries no HTTP status.
 *
 * @example
 * try { recorder.finish() } catch (error) { if (error instanceof MetricsError) console.error(error.key, error.message) }
 */
export class MetricsError extends Error {
  /** Always `'MetricsError'`, so the error can be matched by name across bundles. */
  override readonly name = 'MetricsError'

  /** Builds the error for the action `key` at fault; `message` says what differs. */
  constructor(
    /** The action key at fault. */
    readonly key: string,
    message: string,
  ) {
    super(message)
    withoutStack(this)
  }
}

/**
 * Marks an error of episodic's own checks on a policy's answers or the
 * baseline's data: its stack would list only episodic's frames, so the result
 * row and standard error get `Name: message` alone. Returns `error`.
 */
export function withoutStack<E extends Error>(error: E): E {
  error.stack = `${error.name}: ${error.message}`
  return error
}
