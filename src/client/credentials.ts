/**
 * The credentials file (`~/.config/episodic/credentials`): INI with a
 * `[default]` section and named profiles, each with `api_key` and `base_url`.
 *
 * @example
 * [default]
 * api_key = epk_abcdefghijkl_...
 * base_url = http://127.0.0.1:8787
 *
 * [staging]
 * api_key = epk_...
 * base_url = https://episodic.staging.example.com
 */
export interface Profile {
  /** The API key (`epk_...`) sent as the bearer token. */
  api_key?: string
  /** The service's base URL, for example `http://127.0.0.1:8787`. */
  base_url?: string
}

/** Parses the INI text into profiles; `#` and `;` start comments. Throws on a malformed line, naming it. */
export function parseCredentials(text: string, file = 'credentials'): Record<string, Profile> {
  const profiles: Record<string, Profile> = {}
  let current: Record<string, string> | undefined
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const section = /^\[\s*([^\]]+?)\s*\]$/.exec(line)
    if (section) {
      const name = section[1]!.replace(/^profile\s+/, '')
      current = (profiles[name] ??= {}) as Record<string, string>
      continue
    }
    const pair = /^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$/.exec(line)
    if (!pair || !current) throw new Error(`${file}:${i + 1}: expected "[profile]" or "key = value"`)
    current[pair[1]!] = pair[2]!.replace(/^(["'])(.*)\1$/, '$2')
  }
  return profiles
}
