/**
 * `episodic/client`: the typed API client and its errors.
 *
 * @example
 * import { EpisodicClient } from 'episodic/client'
 * const client = await EpisodicClient.connect({ profile: 'staging' })
 */
export { EpisodicClient } from './client.ts'
export type * from './client.ts'
export { resolveClientConfig, credentialsPath, DEFAULT_BASE_URL, type ClientOptions, type ResolvedClientConfig } from './config.ts'
export { parseCredentials, type Profile } from './credentials.ts'
export { runtimeEnvironment, type ClientEnvironment } from './environment.ts'
export * from './errors.ts'
