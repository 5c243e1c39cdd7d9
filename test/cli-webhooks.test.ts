/**
 * `episodic webhooks add / list / remove` as a user runs them on the embedded
 * database: the secret printed once, JSON output, and exit code 2 for an
 * unknown client, an unknown webhook id or a bad URL. In-process, as the other
 * admin verbs (test/cli.test.ts spawns the built bin once for the family).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './helpers/cli.ts'
import { seedDataDir } from './helpers/pglite.ts'

/** Each run opens PGlite (seconds each on a busy machine). */
const SLOW = 300_000
const dir = mkdtempSync(join(tmpdir(), 'episodic-cli-webhooks-'))
beforeAll(() => seedDataDir(dir))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** `episodic ...args` in-process (test/helpers/cli.ts) on the embedded database in `dir`. */
function run(args: string[]) {
  return runCli(args, { env: { EPISODIC_DATA_DIR: dir } })
}

describe('episodic webhooks', () => {
  it('adds, lists and removes endpoints; the secret is shown once', async () => {
    expect((await run(['clients', 'create', 'acme'])).code).toBe(0)
    const added = await run(['webhooks', 'add', '--client', 'acme', 'https://ci.example.com/hooks/episodic'])
    expect(added.code, added.stderr).toBe(0)
    const secret = /(whsec_[A-Za-z0-9+/=]+)/.exec(added.stdout)![1]!
    const id = /webhook (wh_[0-9a-f]{16})/.exec(added.stdout)![1]!
    // The reference verifier accepts the printed secret as a Standard Webhooks key.
    expect(() => new Webhook(secret)).not.toThrow()

    const json = JSON.parse((await run(['webhooks', 'add', '--client', 'acme', 'http://127.0.0.1:8009/x', '--json'])).stdout)
    expect(json).toMatchObject({ client: 'acme', url: 'http://127.0.0.1:8009/x', secret: expect.stringMatching(/^whsec_/) })

    const listed = await run(['webhooks', 'list', '--client', 'acme', '--json'])
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ webhook_id: id, url: 'https://ci.example.com/hooks/episodic' }),
      expect.objectContaining({ webhook_id: json.webhook_id }),
    ])
    expect(listed.stdout).not.toContain('whsec_')
    expect((await run(['webhooks', 'list', '--client', 'acme'])).stdout).toContain(`${id}\thttps://ci.example.com/hooks/episodic`)

    expect((await run(['webhooks', 'remove', id])).stdout).toContain(`removed webhook ${id}`)
    expect(JSON.parse((await run(['webhooks', 'list', '--client', 'acme', '--json'])).stdout)).toHaveLength(1)
  }, SLOW)

  it('exits 2 with a message naming what is wrong', async () => {
    const cases: Array<[string[], string]> = [
      [['webhooks', 'add', '--client', 'nobody', 'https://x.example'], 'no client named "nobody"'],
      [['webhooks', 'list', '--client', 'nobody'], 'no client named "nobody"'],
      [['webhooks', 'remove', 'wh_0000000000000000'], 'no webhook with id "wh_0000000000000000"'],
      [['webhooks', 'add', '--client', 'acme', 'not a url'], 'webhook URL must be an absolute http(s) URL'],
      [['webhooks', 'add', '--client', 'acme', 'ftp://x.example/'], 'webhook URL must use http or https'],
      // What fetch() refuses at every attempt is refused when the endpoint is added.
      [['webhooks', 'add', '--client', 'acme', 'http://127.0.0.1:6000/x'], 'webhook URL port 6000 is one fetch() never connects to'],
      [['webhooks', 'add', '--client', 'acme', 'https://x.example:1/'], 'webhook URL port 1 is one fetch() never connects to'],
      [['webhooks', 'add', '--client', 'acme', 'http://user:pass@127.0.0.1:8080/x'], 'webhook URL must not hold credentials'],
      [['webhooks', 'add', 'https://x.example'], '--client NAME is required'],
      [['webhooks', 'add', '--client', 'acme'], 'expected 1 argument'],
      [['webhooks', 'rename'], 'expected one of add, list, remove'],
    ]
    for (const [args, message] of cases) {
      const result = await run(args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr, args.join(' ')).toContain(message)
    }
    const help = await run(['webhooks', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('episodic webhooks add --client NAME URL')
  }, SLOW)
})
