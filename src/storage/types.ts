/**
 * Object storage as the core sees it: something that mints SigV4-presigned
 * URLs for object keys. Two implementations: an S3-compatible bucket
 * (Cloudflare R2, AWS S3, MinIO) and the built-in local store served by the
 * app itself under `/storage/<key>`.
 */
export type ArtifactKind = 'video' | 'sensors' | 'actions'

export const ARTIFACT_KINDS: readonly ArtifactKind[] = ['video', 'sensors', 'actions']

/** The Content-Type bound into each artifact's signed PUT URL (spec, "Artifact kinds"). */
export const ARTIFACT_CONTENT_TYPE: Record<ArtifactKind, string> = {
  video: 'video/mp4',
  sensors: 'application/octet-stream',
  actions: 'application/octet-stream',
}

/** File name of each artifact inside its episode's folder (contract, "Object keys"). */
export const ARTIFACT_FILE: Record<ArtifactKind, string> = {
  video: 'video.mp4',
  sensors: 'sensors.npz',
  actions: 'actions.npz',
}

/** `<client_id>/<episode_id>/<file>`, e.g. `c1/0b5e.../actions.npz`. */
export function objectKey(clientId: string, episodeId: string, kind: ArtifactKind): string {
  return `${clientId}/${episodeId}/${ARTIFACT_FILE[kind]}`
}

export interface SignedUrl {
  url: string
  expiresAt: Date
}

export interface PresignInput {
  key: string
  now: Date
  expiresInSeconds: number
  /**
   * Origin (`https://host:port`) the API request arrived on. The built-in
   * store signs URLs for this origin; S3-compatible stores ignore it.
   */
  origin: string
}

export interface ObjectStorage {
  /** Presigned PUT with `content-type` signed and `UNSIGNED-PAYLOAD`. */
  presignPut(input: PresignInput & { contentType: string }): Promise<SignedUrl>
  /** Presigned GET, used by the artifact route. */
  presignGet(input: PresignInput): Promise<SignedUrl>
  /** Public address of an object when a public base URL is configured, else null. */
  publicUrl(key: string): string | null
  /**
   * Present only on the built-in store: answers S3-style to a presigned
   * request under `/storage/<key>` (PUT stores, GET reads back).
   */
  handle?(request: Request, now: Date): Promise<Response>
}

/**
 * Where the built-in store keeps bytes. A capability supplied by the adapter
 * (files on disk in Node/Deno/Bun, an R2 binding on Workers), so the core has
 * no filesystem import. `put` must consume the stream without holding it whole
 * in memory and must not leave a partial object behind on failure.
 */
export interface BlobFiles {
  put(key: string, body: ReadableStream<Uint8Array>): Promise<{ size: number; etag: string }>
  get(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number; etag: string } | null>
}
