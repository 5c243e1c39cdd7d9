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
  const sources = new Map<string, string>()
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue
    const parts = pair.split('=')
    const [from, to] = parts.map((part) => part.trim())
    if (parts.length !== 2 || !from || !to) throw new TypeError(`${flag}: "${pair}" is not FROM=TO (pairs are separated by commas)`)
    if (Object.hasOwn(map, from)) throw new TypeError(`${flag}: "${from}" is mapped twice`)
    const other = sources.get(to)
    if (other !== undefined) throw new TypeError(`${flag}: "${other}" and "${from}" are both mapped to "${to}"; one would overwrite the other`)
    map[from] = to
    sources.set(to, from)
  }
  return map
}

/**
 * A copy of `record` with mapped keys renamed (the same object when there is
 * no map). Throws when a renamed key lands on a key the record keeps (an
 * unmapped one, or `prompt`): one value would silently replace the other.
 */
export function renameKeys<T>(record: Record<string, T>, map: KeyMap | undefined): Record<string, T> {
  if (!map) return record
  const out: Record<string, T> = {}
  for (const key of Object.keys(record)) {
    const name = Object.hasOwn(map, key) ? map[key]! : key
    if (Object.hasOwn(out, name)) {
      const first = Object.keys(record).find((k) => k !== key && (Object.hasOwn(map, k) ? map[k] : k) === name)
      throw new TypeError(
        `the key map gives "${first}" and "${key}" the same name "${name}": one would replace the other (map the other one too, or choose another name)`,
      )
    }
    out[name] = record[key]!
  }
  return out
}
