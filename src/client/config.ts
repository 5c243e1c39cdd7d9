/**
 * Resolves the API key and base URL: explicit options first, then
 * `EPISODIC_API_KEY` / `EPISODIC_BASE_URL`, then the credentials file profile
 * (`EPISODIC_PROFILE` or `default`; the file is `EPISODIC_CREDENTIALS_FILE`
 * or `$XDG_CONFIG_HOME/episodic/credentials`, else `~/.config/episodic/credentials`).
 */
import { parseCredentials } from './credentials.ts'
import { type ClientEnvironment, runtimeEnvironment } from './environment.ts'
import { ConfigurationError } from './errors.ts'

/** How a missing-key ConfigurationError begins (the CLI words its own advice). */
export const NO_API_KEY = 'no API key'

/** Base URL used when no option, variable or profile gives one: a local `episodic serve`. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787'

/** Options of `EpisodicClient.connect` and `resolveClientConfig`; each one overrides the environment. */
export interface ClientOptions {
  /** API key (`ek_...`); default `EPISODIC_API_KEY`, then the credentials file. */
  apiKey?: string
  /** Service URL; default `EPISODIC_BASE_URL`, then the profile, then `DEFAULT_BASE_URL`. */
  baseUrl?: string
  /** A named profile of the credentials file (it must exist when given). */
  profile?: string
  /** `fetch` to use (default: the global one). */
  fetch?: typeof fetch
  /** Where env and files come from (default: the running runtime). */
  environment?: ClientEnvironment
}

/** The key and base URL a client will use, and where the key came from. */
export interface ResolvedClientConfig {
  /** The API key to send as `Authorization: Bearer`. */
  apiKey: string
  /** The service URL. */
  baseUrl: string
  /** Where the key came from, for error messages: `option`, `EPISODIC_API_KEY` or `<file> [profile]`. */
  source: string
}

/** The credentials file path for an environment, or undefined without a home folder. */
export function credentialsPath(env: Record<string, string | undefined>): string | undefined {
  if (env.EPISODIC_CREDENTIALS_FILE) return env.EPISODIC_CREDENTIALS_FILE
  const base = env.XDG_CONFIG_HOME || (env.HOME || env.USERPROFILE ? `${env.HOME || env.USERPROFILE}/.config` : undefined)
  return base ? `${base}/episodic/credentials` : undefined
}

/** Resolves the configuration or throws a ConfigurationError saying what to set. */
export async function resolveClientConfig(options: ClientOptions = {}): Promise<ResolvedClientConfig> {
  const { env, readTextFile } = options.environment ?? runtimeEnvironment()
  const profileName = options.profile ?? env.EPISODIC_PROFILE
  const file = credentialsPath(env)
  let profile: { api_key?: string; base_url?: string } = {}
  const needFile = profileName !== undefined || !(options.apiKey ?? env.EPISODIC_API_KEY) || !(options.baseUrl ?? env.EPISODIC_BASE_URL)
  if (file && needFile) {
    const text = await readTextFile(file)
    if (text !== undefined) {
      let profiles
      try {
        profiles = parseCredentials(text, file)
      } catch (error) {
        throw new ConfigurationError((error as Error).message)
      }
      const name = profileName ?? 'default'
      if (profiles[name]) profile = profiles[name]
      else if (profileName !== undefined) {
        throw new ConfigurationError(`profile "${profileName}" not found in ${file} (profiles: ${Object.keys(profiles).join(', ') || 'none'})`)
      }
    } else if (profileName !== undefined) {
      throw new ConfigurationError(`profile "${profileName}" requested but ${file} does not exist`)
    }
  } else if (profileName !== undefined && !file) {
    throw new ConfigurationError(`profile "${profileName}" requested but no credentials file location is known (set EPISODIC_CREDENTIALS_FILE or HOME)`)
  }

  // A named profile outranks the environment; otherwise options > env > file.
  const fromProfileFirst = profileName !== undefined && options.profile !== undefined
  const apiKey = options.apiKey ?? (fromProfileFirst ? profile.api_key ?? env.EPISODIC_API_KEY : env.EPISODIC_API_KEY ?? profile.api_key)
  const baseUrl = options.baseUrl ?? (fromProfileFirst ? profile.base_url ?? env.EPISODIC_BASE_URL : env.EPISODIC_BASE_URL ?? profile.base_url) ??
    DEFAULT_BASE_URL
  if (!apiKey) {
    throw new ConfigurationError(
      `${NO_API_KEY}: pass apiKey, set EPISODIC_API_KEY, or add "api_key = ..." to the [${profileName ?? 'default'}] section of ${
        file ?? '~/.config/episodic/credentials'
      }`,
    )
  }
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new ConfigurationError(`base URL "${baseUrl}" is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigurationError(`base URL "${baseUrl}" must be http or https`)
  const source = options.apiKey ? 'option' : apiKey === env.EPISODIC_API_KEY ? 'EPISODIC_API_KEY' : `${file} [${profileName ?? 'default'}]`
  return { apiKey: apiKey.trim(), baseUrl: baseUrl.replace(/\/+$/, ''), source }
}
