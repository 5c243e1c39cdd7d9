/**
 * The real PostgreSQL server for tests: `TEST_DATABASE_URL` names it. Each
 * suite gets a throwaway database so suites can run in parallel. When the
 * variable is unset the PostgreSQL runs are skipped loudly, except under
 * `CI=true`, where that is a failure.
 */
import postgres from 'postgres'

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL

let warned = false

/** True when PostgreSQL suites should run; throws under CI when not configured. */
export function postgresAvailable(): boolean {
  if (TEST_DATABASE_URL) return true
  if (process.env.CI === 'true') {
    throw new Error('TEST_DATABASE_URL is not set but CI=true: the PostgreSQL suites must not skip')
  }
  if (!warned) {
    warned = true
    console.warn('\n*** SKIPPED: PostgreSQL suites (set TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test) ***\n')
  }
  return false
}

/** Creates `<prefix>_<random>` on the server (default: the test server); `drop()` removes it. */
export async function createTempDatabase(serverUrl = TEST_DATABASE_URL!, prefix = 'episodic_t'): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`
  await admin.unsafe(`create database ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}
