/**
 * The error every NPY/NPZ failure throws. Its message names the archive entry
 * when there is one, so a bad upload reads as
 * `npz entry "/joint_states/position.npy": unsupported dtype '<c8'`; the
 * replay harness prefixes the artifact (`sensors.npz: npz entry ...`).
 *
 * @example
 * try { readNpz(bytes) } catch (error) { if (error instanceof NpzError) console.error(error.entry, error.message) }
 */
export class NpzError extends Error {
  /** Always `'NpzError'`, so the error can be matched by name across bundles. */
  override readonly name = 'NpzError'
  /** The archive entry at fault (`"/joint_states/position.npy"`), or null for the archive as a whole. */
  readonly entry: string | null

  /** Builds the error; `entry` names the archive member at fault, `cause` the underlying error. */
  constructor(message: string, options: { entry?: string | null; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.entry = options.entry ?? null
    // The archive's fault, not the caller's code: a stack of the reader's frames would only be noise.
    this.stack = `${this.name}: ${message}`
  }
}

/** An `NpzError` for `entry` (null: the archive), its message prefixed with where. */
export function npzError(entry: string | null, message: string, cause?: unknown): NpzError {
  const where = entry === null ? 'npz' : `npz entry ${JSON.stringify(entry)}`
  return new NpzError(`${where}: ${message}`, { entry, cause })
}
