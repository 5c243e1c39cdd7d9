/**
 * The URL a server listening on `host:port` answers at, with an IPv6 host in
 * brackets (`http://[::1]:8787`): what every adapter's `serve*` reports.
 *
 * @example
 * listenUrl('::1', 8787) // 'http://[::1]:8787'
 */
export function listenUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}
