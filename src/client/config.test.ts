import { describe, expect, it } from 'vitest'
import { resolveClientConfig } from './config.ts'
import { parseCredentials } from './credentials.ts'
import { ConfigurationError } from './errors.ts'

const KEY = (c: string) => `epk_${c.repeat(12)}_${'A'.repeat(43)}`
const FILE = `# episodic
[default]
api_key = ${KEY('a')}
base_url = http://default.example:8787/

[staging]
api_key = "${KEY('b')}"
base_url = https://staging.example
`

function environment(env: Record<string, string>, files: Record<string, string> = {}) {
  return { env, readTextFile: (p: string) => Promise.resolve(files[p]) }
}

describe('parseCredentials', () => {
  it('reads sections, quotes and comments', () => {
    expect(parseCredentials(FILE)).toEqual({
      default: { api_key: KEY('a'), base_url: 'http://default.example:8787/' },
      staging: { api_key: KEY('b'), base_url: 'https://staging.example' },
    })
  })

  it('names the malformed line', () => {
    expect(() => parseCredentials('[default]\nthis is not ini', 'creds')).toThrow('creds:2')
  })
})

describe('resolveClientConfig', () => {
  const home = { HOME: '/home/u' }
  const files = { '/home/u/.config/episodic/credentials': FILE }

  it('prefers options, then the environment, then the default profile', async () => {
    expect(await resolveClientConfig({ apiKey: KEY('c'), baseUrl: 'http://x:1', environment: environment(home, files) })).toMatchObject({
      apiKey: KEY('c'),
      baseUrl: 'http://x:1',
      source: 'option',
    })
    expect(await resolveClientConfig({ environment: environment({ ...home, EPISODIC_API_KEY: KEY('d') }, files) })).toMatchObject({
      apiKey: KEY('d'),
      baseUrl: 'http://default.example:8787',
      source: 'EPISODIC_API_KEY',
    })
    expect(await resolveClientConfig({ environment: environment(home, files) })).toMatchObject({
      apiKey: KEY('a'),
      source: '/home/u/.config/episodic/credentials [default]',
    })
  })

  it('selects a named profile, which outranks the environment', async () => {
    const config = await resolveClientConfig({ profile: 'staging', environment: environment({ ...home, EPISODIC_API_KEY: KEY('d') }, files) })
    expect(config).toMatchObject({ apiKey: KEY('b'), baseUrl: 'https://staging.example' })
  })

  it('honours XDG_CONFIG_HOME, EPISODIC_CREDENTIALS_FILE and EPISODIC_PROFILE', async () => {
    expect((await resolveClientConfig({ environment: environment({ XDG_CONFIG_HOME: '/x' }, { '/x/episodic/credentials': FILE }) })).apiKey).toBe(KEY('a'))
    expect((await resolveClientConfig({ environment: environment({ EPISODIC_CREDENTIALS_FILE: '/c', EPISODIC_PROFILE: 'staging' }, { '/c': FILE }) })).apiKey)
      .toBe(KEY('b'))
  })

  it('defaults the base URL to the local server', async () => {
    expect((await resolveClientConfig({ apiKey: KEY('a'), environment: environment({}) })).baseUrl).toBe('http://127.0.0.1:8787')
  })

  it('explains what to set when nothing is configured', async () => {
    const error = await resolveClientConfig({ environment: environment(home) }).catch((e) => e)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect(error.message).toContain('EPISODIC_API_KEY')
    expect(error.message).toContain('/home/u/.config/episodic/credentials')
  })

  it('refuses an unknown profile, a missing file for a profile, and a bad base URL', async () => {
    await expect(resolveClientConfig({ profile: 'prod', environment: environment(home, files) })).rejects.toThrow('profile "prod" not found')
    await expect(resolveClientConfig({ profile: 'prod', environment: environment(home) })).rejects.toThrow('does not exist')
    await expect(resolveClientConfig({ apiKey: KEY('a'), baseUrl: 'ftp://x', environment: environment({}) })).rejects.toThrow('http or https')
    await expect(resolveClientConfig({ apiKey: KEY('a'), baseUrl: 'nope', environment: environment({}) })).rejects.toBeInstanceOf(ConfigurationError)
  })
})
