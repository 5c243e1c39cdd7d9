/**
 * Exit codes say who erred (issue 16, item 12), on the embedded database and
 * on PostgreSQL: usage mistakes (a malformed argument, or one naming nothing
 * that exists) exit 2 with one line and a hint, a client that already exists
 * exits 3, never 1 ("unexpected failure").
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATABASES } from '../helpers/databases.ts'
import { createTempDatabase } from '../helpers/postgres.ts'
import { HELD_FOLDER_WAIT_MS, runAdmin } from '../../src/cli/admin.ts'
import { readConfig } from '../../src/config.ts'
import { runCli as runInProcess } from '../helpers/cli.ts'
import { seedDataDir } from '../helpers/pglite.ts'

/**
 * `episodic <args>` in this process (exit codes are what main returns; the
 * bin only passes them to process.exit, which test/cli.test.ts checks by
 * spawning it). `env` is all the command sees, with no credentials file.
 */
const runCli = (args: string[], env: Record<string, string>) => runInProcess(args, { env: { EPISODIC_CREDENTIALS_FILE: '/nonexistent', ...env } })

describe('usage errors', () => {
  it('print one line and a hint, not the whole help, and exit 2', async () => {
    const env = { EPISODIC_DATA_DIR: join(tmpdir(), 'episodic-never-created') }
    for (
      const [args, line, topic] of [
        [['keys', 'create'], 'keys create: --client NAME is required', 'keys'],
        [['keys', 'rotate'], 'keys: expected one of create, list, revoke', 'keys'],
        [['episodes', 'archive', 'not-an-id'], 'episodes archive: "not-an-id" is not an episode id (a UUID)', 'episodes'],
        [['keys', 'revoke', 'short'], 'keys revoke: "short" is not a key id (12 characters a-z, 2-7) or a key', 'keys'],
        [['launch'], 'unknown verb "launch"', ''],
      ] as const
    ) {
      const result = await runCli([...args], env)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toBe(`episodic: ${line}\nsee episodic ${topic ? `${topic} ` : ''}--help\n`)
      expect(result.stdout).toBe('')
    }
  }, 180_000)

  it('replay run without a key names the variable and the flag, not the library option', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'episodic-nokey-'))
    try {
      writeFileSync(join(dir, 'policy.mjs'), 'export const act = (obs) => obs\n')
      const result = await runCli([
        'replay',
        'run',
        '--policy',
        join(dir, 'policy.mjs') + ':act',
        '--candidate-version',
        'v2',
        '--baseline-episodes',
        '0b3c5a3e-1f0e-4d43-8a57-3b6f5f2e9a10',
      ], {})
      expect(result.code).toBe(3)
      expect(result.stderr).toContain('set EPISODIC_API_KEY or --profile')
      expect(result.stderr).not.toContain('apiKey')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('admin verbs on a data folder a process holds without answering on a control socket', () => {
  it('wait for it (a server starting, another verb), then exit 3 saying to stop it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'episodic-held-'))
    await seedDataDir(dir)
    try {
      // A server still starting (or another admin verb): a live pid in the lock, no control.json.
      writeFileSync(join(dir, 'episodic.lock'), String(process.pid))
      // The CLI waits HELD_FOLDER_WAIT_MS (10 s); the same code with a shorter wait keeps this test quick.
      expect(HELD_FOLDER_WAIT_MS).toBe(10_000)
      const started = Date.now()
      const refused = await runAdmin(readConfig({ EPISODIC_DATA_DIR: dir }), 'keys.list', ['--client', 'default'], 1_500).catch((e: unknown) => e)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500)
      expect(refused).toMatchObject({ exitCode: 3 })
      expect((refused as Error).message).toBe(
        `data folder ${dir} is in use by process ${process.pid} (a server not answering on its control socket, or another admin verb), still after 1.5 s: ` +
          'stop it first, or use DATABASE_URL',
      )
      // Let go of while the verb waits (the other verb done): it goes on.
      setTimeout(() => rmSync(join(dir, 'episodic.lock'), { force: true }), 1_000)
      const waited = await runCli(['clients', 'list'], { EPISODIC_DATA_DIR: dir })
      expect([waited.code, waited.stdout], waited.stderr).toEqual([0, ''])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe.each(DATABASES)('admin verbs that name what is not configured, on %s', (kind) => {
  let env: Record<string, string>
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    if (kind === 'postgres') {
      const temp = await createTempDatabase()
      env = { DATABASE_URL: temp.url }
      cleanup = () => temp.drop()
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'episodic-exit-'))
      await seedDataDir(dir)
      env = { EPISODIC_DATA_DIR: dir }
      cleanup = () => Promise.resolve(rmSync(dir, { recursive: true, force: true }))
    }
  })
  afterAll(() => cleanup?.())

  it('exit 2 (with the hint) for an unknown client, key or episode; exit 3 for a client that exists', async () => {
    expect((await runCli(['clients', 'create', 'acme'], env)).code).toBe(0)
    const exists = await runCli(['clients', 'create', 'acme'], env)
    expect(exists.code).toBe(3)
    expect(exists.stderr).toBe('episodic: client "acme" already exists\n')
    const cases: Array<[string[], string]> = [
      [['keys', 'create', '--client', 'nobody'], 'episodic: no client named "nobody"\nsee episodic keys --help\n'],
      [['keys', 'list', '--client', 'nobody'], 'episodic: no client named "nobody"\nsee episodic keys --help\n'],
      [['keys', 'revoke', 'aaaaaaaaaaaa'], 'episodic: no key with id "aaaaaaaaaaaa"\nsee episodic keys --help\n'],
      [
        ['episodes', 'archive', '0b3c5a3e-1f0e-4d43-8a57-3b6f5f2e9a10'],
        'episodic: no episode with id "0b3c5a3e-1f0e-4d43-8a57-3b6f5f2e9a10"\nsee episodic episodes --help\n',
      ],
    ]
    for (const [args, stderr] of cases) {
      const result = await runCli(args, env)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toBe(stderr)
    }
  }, 300_000)
})
