import { ConfigurationError } from '../../client/errors.ts'

/**
 * The server's address as the WebSocket gets it, or a ConfigurationError
 * saying what is wrong with it (scheme, port, a fragment).
 */
export function serverUrl(url: unknown): string {
  const got = JSON.stringify(url)
  if (typeof url !== 'string' || !/^wss?:\/\/./i.test(url)) throw new ConfigurationError(`websocketPolicy: url must start with ws:// or wss:// (got ${got})`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ConfigurationError(`websocketPolicy: url ${got} is not a valid URL (host and port 1-65535?)`)
  }
  if (parsed.hash !== '' || url.includes('#')) {
    throw new ConfigurationError(`websocketPolicy: url ${got} has a fragment (#...), which a WebSocket URL cannot have`)
  }
  if (parsed.port === '0') throw new ConfigurationError(`websocketPolicy: url ${got} names port 0, which no server listens on (host and port 1-65535?)`)
  return parsed.href
}
