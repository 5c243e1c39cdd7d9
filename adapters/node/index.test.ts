import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { readConfig } from '../../src/config.ts'
import { objectKey } from '../../src/storage/types.ts'
import { seedDataDir } from '../../test/helpers/pglite.ts'
import { createNodeApp } from './index.ts'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** The environment of a server on a new data folder (a database already made), no webhook delivery, `env` over it. */
async function freshFolder(env: Record<string, string> = {}): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'episodic-node-app-'))
  dirs.push(dir)
  await seedDataDir(dir)
  return { EPISODIC_DATA_DIR: dir, EPISODIC_WEBHOOK_INTERVAL_MS: '0', ...env }
}

/** `shared_buffers` of the embedded database a server opens from `env`. */
async function sharedBuffers(env: Record<string, string>): Promise<string> {
  const node = await createNodeApp(readConfig(await freshFolder({ EPISODIC_STORAGE: 'none', ...env })), {}, { control: false })
  try {
    const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(node.app.deps.db)
    return rows[0]!.shared_buffers
  } finally {
    await node.close()
  }
}

describe('createNodeApp on the embedded database', () => {
  it("starts PGlite with EPISODIC_EMBEDDED_SHARED_BUFFERS, else PostgreSQL's default", async () => {
    expect(await sharedBuffers({ EPISODIC_EMBEDDED_SHARED_BUFFERS: '16MB' })).toBe('16MB')
    expect(await sharedBuffers({})).toBe('128MB')
  }, 120_000)
})

describe('createNodeApp when its start fails', () => {
  it('closes the database and releases the data folder', async () => {
    const config = readConfig(await freshFolder({ EPISODIC_STORAGE: 'none', EPISODIC_EMBEDDED_SHARED_BUFFERS: '16MB' }))
    const deaf = { listen: () => Promise.reject(new Error('LISTEN refused')) }
    await expect(createNodeApp(config, { revocations: deaf }, { control: false })).rejects.toThrow('LISTEN refused')
    // The folder is free again: before, the failed start kept its lock (and its PGlite) open.
    const node = await createNodeApp(config, {}, { control: false })
    await node.close()
  }, 120_000)
})

describe('createNodeApp with EPISODIC_STORAGE_QUOTA_BYTES', () => {
  it("gives the built-in store the quota: an upload past it is refused with S3's QuotaExceeded", async () => {
    const env = await freshFolder({ EPISODIC_EMBEDDED_SHARED_BUFFERS: '16MB', EPISODIC_STORAGE_QUOTA_BYTES: '100' })
    const node = await createNodeApp(readConfig(env), {}, { control: false })
    try {
      const put = async (kind: 'actions' | 'sensors', size: number) => {
        const key = objectKey('11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', kind)
        const signed = await node.app.deps.storage!.presignPut({
          key,
          contentType: 'application/octet-stream',
          now: new Date(),
          expiresInSeconds: 600,
          origin: 'http://localhost',
        })
        const response = await node.app.fetch(
          new Request(signed.url, {
            method: 'PUT',
            body: new Uint8Array(size),
            headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
          }),
        )
        return { status: response.status, text: await response.text() }
      }
      expect((await put('actions', 60)).status).toBe(200)
      const refused = await put('sensors', 60)
      expect(refused.status).toBe(403)
      expect(refused.text).toContain('<Code>QuotaExceeded</Code>')
    } finally {
      await node.close()
    }
    expect(() => readConfig({ ...env, EPISODIC_STORAGE_QUOTA_BYTES: '10GB' })).toThrow(
      'EPISODIC_STORAGE_QUOTA_BYTES must be a whole number of bytes > 0 (got "10GB")',
    )
  }, 120_000)
})
