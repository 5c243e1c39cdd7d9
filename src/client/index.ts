/**
 * `episodic/client`: the typed API client and its errors. The client reads the
 * same credentials file and environment variables as the CLI, so a script
 * that runs where `episodic` is logged in needs no configuration.
 *
 * @example
 * import { EpisodicClient } from 'episodic/client'
 * const client = await EpisodicClient.connect({ profile: 'staging' })
 *
 * @module
 */
export { EpisodicClient } from './client.ts'
export type * from './client.ts'
export { type ClientOptions, credentialsPath, DEFAULT_BASE_URL, resolveClientConfig, type ResolvedClientConfig } from './config.ts'
export { parseCredentials, type Profile } from './credentials.ts'
export { type ClientEnvironment, runtimeEnvironment } from './environment.ts'
export * from './errors.ts'
export {
  type ArtifactUpload,
  type ArtifactUploaded,
  type PutRequest,
  type PutTransport,
  type RecordedEpisode,
  type RecordEpisode,
  recordEpisode,
  uploadArtifact,
  type UploadOptions,
} from './uploads.ts'
