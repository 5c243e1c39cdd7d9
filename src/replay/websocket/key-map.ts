/**
 * Key renaming between episodic's recorded namespaces and the names a policy
 * server expects (`--obs-map`, `--action-map`). Unmapped keys keep their name.
 */

/** From-name to to-name. */
export type KeyMap = Readonly<Record<string, string>>

/**
 * Parses `from=to,from=to` (a key may itself contain `/` or `.`, not `,` or
 * `=`). Throws naming the flag and the bad pair.
 *
 * @example
 * parseKeyMap('/joint_states/position=observation/state,/camera/depth=observation/image', '--obs-map')
 * // { '/joint_states/position': 'observation/state', '/camera/depth': 'observation/image' }
 */
export function parseKeyMap(text: string, flag: string): Record<string, string> {
  const map: Record<string, string> = {}
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue
    const parts = pair.split('=')
    const [from, to] = parts.map((part) => part.trim())
    if (parts.length !== 2 || !from || !to) throw new TypeError(`${flag}: "${pair}" is not FROM=TO (pairs are separated by commas)`)
    if (Object.hasOwn(map, from)) throw new TypeError(`${flag}: "${from}" is mapped twice`)
    map[from] = to
  }
  return map
}

/** A copy of `record` with mapped keys renamed (the same object when there is no map). */
export function renameKeys<T>(record: Record<string, T>, map: KeyMap | undefined): Record<string, T> {
  if (!map) return record
  const out: Record<string, T> = {}
  for (const key of Object.keys(record)) out[Object.hasOwn(map, key) ? map[key]! : key] = record[key]!
  return out
}
