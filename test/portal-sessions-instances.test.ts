/**
 * Portal sessions across instances: two servers on one PostgreSQL, no
 * EPISODIC_SESSION_SECRET, no sticky sessions. A session signed by one must
 * verify on the other (the key is kept in the database), as a load balancer
 * sends a browser's requests to either.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createNodeApp } from '../adapters/node/index.ts'
import { createClient, createKey } from '../src/admin/admin.ts'
import { readConfig } from '../src/config.ts'
import { createTempDatabase, postgresAvailable } from './helpers/postgres.ts'

const folders: string[] = []
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

describe.runIf(postgresAvailable())('portal sessions on several instances of one PostgreSQL', () => {
  it('a sign-in on one instance is a session on the other', async () => {
    const temp = await createTempDatabase()
    cleanups.push(() => temp.drop())
    const instance = async () => {
      const dir = mkdtempSync(join(tmpdir(), 'episodic-instance-'))
      folders.push(dir)
      const node = await createNodeApp(readConfig({ DATABASE_URL: temp.url, EPISODIC_DATA_DIR: dir, EPISODIC_STORAGE: 'none' }), {}, { deliverWebhooks: false })
      cleanups.push(() => node.close())
      return node.app
    }
    const [a, b] = [await instance(), await instance()]
    await createClient(a.deps, 'lab')
    const { key } = await createKey(a.deps, 'lab')
    const signedIn = await a.request('http://a.test/portal/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://a.test' },
      body: new URLSearchParams({ api_key: key }),
    })
    expect(signedIn.status).toBe(303)
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!
    const onB = await b.request('http://a.test/api/episodes?limit=1', { headers: { cookie } })
    expect(onB.status, await onB.clone().text()).toBe(200)
    expect((await b.request('http://a.test/portal/episodes', { headers: { cookie } })).status).toBe(200)
  }, 120_000)
})
