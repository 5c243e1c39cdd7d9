/**
 * Reads the contract's environment variables into a typed configuration. The
 * one place that knows variable names; it takes the environment as a plain
 * object, so Workers (`env`), Deno and Node all pass theirs in.
 *
 * @example
 * const config = readConfig(env) // Node's process environment, Deno.env.toObject(), a Worker's env
 */
import type { RateLimit } from './http/rate-limit.ts'

/** An S3-compatible bucket, from the `S3_*` variables. */
export interface S3Config {
  /** `S3_ENDPOINT`: the bucket's http(s) endpoint. */
  endpoint: string
  /** `S3_BUCKET`. */
  bucket: string
  /** `S3_ACCESS_KEY_ID`. */
  accessKeyId: string
  /** `S3_SECRET_ACCESS_KEY`. */
  secretAccessKey: string
  /** `S3_REGION`, default `auto` (R2). */
  region: string
  /** `S3_PUBLIC_BASE_URL`: a public address of the bucket, reported as `public_url` of upload URLs. */
  publicBaseUrl?: string
}

/** The service configuration `readConfig` reads from the environment. */
export interface EpisodicConfig {
  /** `DATABASE_URL`: PostgreSQL; absent, the embedded PGlite database in `dataDir` is used. */
  databaseUrl?: string
  /**
   * PostgreSQL timeouts (DATABASE_CONNECT_TIMEOUT_S, DATABASE_STATEMENT_TIMEOUT_MS) when set, defaults in
   * `PostgresDatabaseOptions`; the embedded database's `shared_buffers` (EPISODIC_EMBEDDED_SHARED_BUFFERS).
   */
  database: { connectTimeoutSeconds?: number; statementTimeoutMs?: number; sharedBuffers?: string }
  /** `EPISODIC_DATA_DIR`, default `./.episodic`: the embedded database, the built-in store's objects and generated secrets. */
  dataDir: string
  /** `s3` when the S3_* variables are set, `local` for the built-in store, `none` with EPISODIC_STORAGE=none. */
  storage: { kind: 's3'; s3: S3Config } | { kind: 'local'; secret?: string; publicBaseUrl?: string; quotaBytes?: number } | { kind: 'none' }
  /** `PORT`, default 8787 (0 picks a free port). */
  port: number
  /** `HOST`, default `127.0.0.1`. */
  host: string
  /** `EPISODIC_PUBLIC_URL`: the public origin when behind a proxy. */
  baseUrl?: string
  /** `EPISODIC_AUTH_CACHE_MS`, default 5000: how long a verified API key is cached. */
  authCacheMs: number
  /** Signs portal session cookies (EPISODIC_SESSION_SECRET); when unset, one is made and kept: in the data folder (embedded) or the database (PostgreSQL). */
  sessionSecret?: string
  /** Portal sign-in tries per minute per client address (EPISODIC_SIGNIN_LIMIT, default 10; 0 turns it off). */
  signInLimit: number
  /** API requests per minute per key (EPISODIC_RATE_LIMIT; unset or 0: no limit). */
  apiRateLimit?: number
  /** Take the client address from X-Forwarded-For (EPISODIC_TRUST_PROXY=1, behind a reverse proxy). */
  trustProxy: boolean
  /** Pause between webhook delivery passes of a server (EPISODIC_WEBHOOK_INTERVAL_MS, default 5000; 0: this instance sends none). */
  webhookIntervalMs: number
}

/** The core's limit options for a config (rates are per minute). */
export function limitOptions(config: Pick<EpisodicConfig, 'signInLimit' | 'apiRateLimit'>): { signInLimit: RateLimit | false; apiRateLimit?: RateLimit } {
  return {
    signInLimit: config.signInLimit > 0 ? { limit: config.signInLimit, windowMs: 60_000 } : false,
    ...(config.apiRateLimit ? { apiRateLimit: { limit: config.apiRateLimit, windowMs: 60_000 } } : {}),
  }
}

const S3_REQUIRED = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const

/** Parses the environment; throws a message naming the variable that is wrong. */
export function readConfig(env: Record<string, string | undefined>): EpisodicConfig {
  const get = (name: string) => {
    const value = env[name]?.trim()
    return value ? value : undefined
  }
  const storageMode = get('EPISODIC_STORAGE')
  if (storageMode && !['none', 'local', 's3'].includes(storageMode)) {
    throw new Error(`EPISODIC_STORAGE must be none, local or s3 (got "${storageMode}")`)
  }
  for (const name of ['S3_PUBLIC_BASE_URL', 'EPISODIC_PUBLIC_URL']) {
    const value = get(name)
    if (value !== undefined && !httpUrl(value)) throw new Error(`${name} must be an http(s) URL such as https://files.example.com (got "${value}")`)
  }
  const someS3 = S3_REQUIRED.some((name) => get(name))
  let storage: EpisodicConfig['storage']
  if (storageMode === 'none') storage = { kind: 'none' }
  else if (someS3 || storageMode === 's3') {
    const missing = S3_REQUIRED.filter((name) => !get(name))
    if (missing.length) throw new Error(`S3 storage needs ${missing.join(', ')} (set all of ${S3_REQUIRED.join(', ')})`)
    const endpoint = get('S3_ENDPOINT')!
    // new URL refuses a placeholder left in (https://<account_id>.r2.cloudflarestorage.com).
    if (!httpUrl(endpoint)) throw new Error(`S3_ENDPOINT must be an http(s) URL (got "${endpoint}")`)
    storage = {
      kind: 's3',
      s3: {
        endpoint: endpoint.replace(/\/+$/, ''),
        bucket: get('S3_BUCKET')!,
        accessKeyId: get('S3_ACCESS_KEY_ID')!,
        secretAccessKey: get('S3_SECRET_ACCESS_KEY')!,
        region: get('S3_REGION') ?? 'auto',
        publicBaseUrl: get('S3_PUBLIC_BASE_URL'),
      },
    }
  } else {
    // S3_PUBLIC_BASE_URL fills public_url whatever serves the bytes (contract, "Configuration"):
    // with the built-in store, a CDN or web server in front of the objects folder.
    const publicBaseUrl = get('S3_PUBLIC_BASE_URL')
    const quota = get('EPISODIC_STORAGE_QUOTA_BYTES')
    const quotaBytes = quota === undefined ? undefined : Number(quota)
    if (quotaBytes !== undefined && !(Number.isSafeInteger(quotaBytes) && quotaBytes > 0)) {
      throw new Error(`EPISODIC_STORAGE_QUOTA_BYTES must be a whole number of bytes > 0 (got "${quota}")`)
    }
    storage = { kind: 'local', secret: get('EPISODIC_STORAGE_SECRET'), ...(publicBaseUrl ? { publicBaseUrl } : {}), ...(quotaBytes ? { quotaBytes } : {}) }
  }

  const port = Number(get('PORT') ?? 8787)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number (got "${get('PORT')}")`)
  const authCacheMs = Number(get('EPISODIC_AUTH_CACHE_MS') ?? 5000)
  if (!Number.isFinite(authCacheMs) || authCacheMs < 0) throw new Error('EPISODIC_AUTH_CACHE_MS must be a number of milliseconds >= 0')
  const perMinute = (name: string, fallback: number | undefined) => {
    const value = get(name)
    if (value === undefined) return fallback
    const n = Number(value)
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of requests per minute, 0 for no limit (got "${value}")`)
    return n
  }
  const signInLimit = perMinute('EPISODIC_SIGNIN_LIMIT', 10)!
  const apiRateLimit = perMinute('EPISODIC_RATE_LIMIT', undefined)
  const trustProxy = ['1', 'true', 'yes'].includes((get('EPISODIC_TRUST_PROXY') ?? '').toLowerCase())
  const connectTimeout = get('DATABASE_CONNECT_TIMEOUT_S')
  const connectTimeoutSeconds = connectTimeout === undefined ? undefined : Number(connectTimeout)
  if (connectTimeoutSeconds !== undefined && !(connectTimeoutSeconds > 0 && connectTimeoutSeconds <= 3600)) {
    throw new Error(`DATABASE_CONNECT_TIMEOUT_S must be a number of seconds in (0, 3600] (got "${get('DATABASE_CONNECT_TIMEOUT_S')}")`)
  }
  const statementTimeout = get('DATABASE_STATEMENT_TIMEOUT_MS')
  const statementTimeoutMs = statementTimeout === undefined ? undefined : Number(statementTimeout)
  if (statementTimeoutMs !== undefined && !(Number.isInteger(statementTimeoutMs) && statementTimeoutMs >= 0)) {
    throw new Error(`DATABASE_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds >= 0, 0 for none (got "${get('DATABASE_STATEMENT_TIMEOUT_MS')}")`)
  }
  const sharedBuffers = embeddedSharedBuffers(get('EPISODIC_EMBEDDED_SHARED_BUFFERS'), get('DATABASE_URL') !== undefined)
  const sessionSecret = get('EPISODIC_SESSION_SECRET')
  if (sessionSecret !== undefined && sessionSecret.length < 32) throw new Error('EPISODIC_SESSION_SECRET must be at least 32 characters')
  const webhookIntervalMs = Number(get('EPISODIC_WEBHOOK_INTERVAL_MS') ?? 5000)
  if (!Number.isFinite(webhookIntervalMs) || webhookIntervalMs < 0) {
    throw new Error('EPISODIC_WEBHOOK_INTERVAL_MS must be a number of milliseconds >= 0 (0 turns delivery off)')
  }
  return {
    databaseUrl: get('DATABASE_URL'),
    database: { connectTimeoutSeconds, statementTimeoutMs, sharedBuffers },
    dataDir: get('EPISODIC_DATA_DIR') ?? './.episodic',
    storage,
    port,
    host: get('HOST') ?? '127.0.0.1',
    baseUrl: get('EPISODIC_PUBLIC_URL'),
    authCacheMs,
    sessionSecret,
    signInLimit,
    apiRateLimit: apiRateLimit || undefined,
    trustProxy,
    webhookIntervalMs,
  }
}

/** True for an absolute http: or https: URL with a host. */
function httpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== ''
  } catch {
    return false
  }
}

const KB_PER_UNIT: Record<string, number> = { kB: 1, MB: 1024, GB: 1024 * 1024 }

/**
 * `EPISODIC_EMBEDDED_SHARED_BUFFERS`: PostgreSQL's `shared_buffers` for the
 * embedded database (default PostgreSQL's 128MB, all of which PGlite sets up
 * in the server's memory), in PostgreSQL's units: 128kB to 1GB.
 */
function embeddedSharedBuffers(value: string | undefined, postgres: boolean): string | undefined {
  if (value === undefined) return undefined
  if (postgres) {
    throw new Error(
      "EPISODIC_EMBEDDED_SHARED_BUFFERS sizes the embedded database, which DATABASE_URL replaces (PostgreSQL's shared_buffers is its server's setting)",
    )
  }
  const match = /^(\d+)(kB|MB|GB)$/.exec(value)
  const kb = match ? Number(match[1]) * KB_PER_UNIT[match[2]!]! : NaN
  if (!(kb >= 128 && kb <= 1024 * 1024)) throw new Error(`EPISODIC_EMBEDDED_SHARED_BUFFERS must be a size from 128kB to 1GB, such as 32MB (got "${value}")`)
  return value
}
