/**
 * Object keys as URL paths. S3 signs the path exactly as sent (no
 * normalisation, no second encoding), so every store turns a key into a path
 * with one fixed encoding: each `/`-separated segment escaped per RFC 3986,
 * the same escaping SigV4 uses for query strings.
 */

/** Only RFC 3986 unreserved characters: nothing to escape (the usual case: UUIDs and file names). */
const UNRESERVED = /^[A-Za-z0-9._~-]*$/
const UNRESERVED_PATH = /^[A-Za-z0-9._~/-]*$/

/** RFC 3986 escaping: `encodeURIComponent` plus `!'()*`, as SigV4 requires. */
export function escapeUri(value: string): string {
  if (UNRESERVED.test(value)) return value
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/**
 * The URL path of a key, without the leading slash.
 *
 * @example
 * encodeKeyPath('c1/ep 1/video.mp4') // 'c1/ep%201/video.mp4'
 */
export function encodeKeyPath(key: string): string {
  if (UNRESERVED_PATH.test(key)) return key
  return key.split('/').map(escapeUri).join('/')
}

/**
 * True when a key is safe to map onto a folder tree: relative, no empty,
 * `.` or `..` segments, no backslashes or control characters. Keys the
 * service builds (`<client_id>/<episode_id>/<file>`) always pass.
 */
export function isSafeKey(key: string): boolean {
  if (key.length === 0 || key.length > 1024) return false
  if (/[\\\u0000-\u001f\u007f]/.test(key)) return false
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..')
}
