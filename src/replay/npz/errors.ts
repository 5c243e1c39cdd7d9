import { EpisodicError } from '../../errors.ts'

/**
 * The error every NPZ failure throws: an `EpisodicError` with code `invalid`
 * whose message names the archive entry when there is one, so a bad upload
 * reads as `npz entry "/joint_states/position.npy": unsupported dtype '<c8'`.
 */
export function npzError(entry: string | null, message: string, cause?: unknown): EpisodicError {
  const where = entry === null ? 'npz' : `npz entry ${JSON.stringify(entry)}`
  return new EpisodicError('invalid', `${where}: ${message}`, cause === undefined ? undefined : { cause })
}
