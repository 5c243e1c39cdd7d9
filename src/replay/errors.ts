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

/**
 * A request that waited behind the one that took a remote policy down (a
 * crashed Python process, a policy server's connection closed after another
 * episode's error): it never ran, so it may be sent again. Internal to the
 * policy that raises it; `retried` turns it back into its cause.
 */
export class Bystander extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message)
  }
}

/** `again()` once when `error` is a `Bystander`; otherwise, or when that fails the same way, the underlying error. */
export async function retried<T>(error: unknown, again: () => Promise<T>): Promise<T> {
  if (!(error instanceof Bystander)) throw error
  try {
    return await again()
  } catch (second) {
    throw second instanceof Bystander ? second.cause : second
  }
}

/** An error that names its step already: ours (the step timeout, a policy server's), or one rejected for several steps. */
const NAMES_STEP = /\bstep \d+\)/

/**
 * Names the step in an error a JavaScript policy threw (`Error: diverged
 * (step 41)`), as the Python bridge and the step timeout do; the stack keeps
 * the policy's frames. A thrown string or number becomes text that names it
 * too. Anything else, or an error that names a step already, is returned as
 * it is.
 */
export function atStep(error: unknown, step: number): unknown {
  if (typeof error === 'string' || typeof error === 'number') return NAMES_STEP.test(String(error)) ? error : `${error} (step ${step})`
  if (!(error instanceof Error) || NAMES_STEP.test(error.message)) return error
  const where = `step ${step})`
  const first = `${error.name}: ${error.message}`
  try {
    // Read first: V8 formats the stack when it is first read, with the message of that moment.
    const stack = error.stack
    error.message = `${error.message} (${where}`
    if (typeof stack === 'string' && stack.startsWith(first)) error.stack = `${error.name}: ${error.message}${stack.slice(first.length)}`
  } catch {
    // A frozen error keeps its words.
  }
  return error
}
