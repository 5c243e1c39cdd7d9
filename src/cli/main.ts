#!/usr/bin/env node
/**
 * The `episodic` command. Only this folder (and adapters/) touches `process`
 * and `node:*`; everything else is the runtime-agnostic core.
 */
import { parseArgs } from 'node:util'
import { type EpisodicConfig, readConfig } from '../config.ts'
import { EpisodicError } from '../errors.ts'
import { isUuid } from '../http/fields.ts'
import { CliError, configError, EXIT, usageError } from './exit.ts'
import { HELP } from './help.ts'
import { type CliIO, cliIO, err, out, withIO } from './io.ts'
import { printAdminResult } from './print.ts'
import { VERSION } from '../version.ts'

type Verb = (argv: string[]) => Promise<number>

const VERBS: Record<string, Verb> = {
  serve: async (argv) => {
    const { values, positionals } = parse(argv, { port: { type: 'string' }, host: { type: 'string' } }, 'serve')
    if (positionals.length > 0) throw usageError(`serve: unexpected argument "${positionals[0]}" (serve takes only --port and --host)`, 'serve')
    const port = values.port as string | undefined
    if (port !== undefined && !(/^\d+$/.test(port) && Number(port) <= 65535)) {
      throw usageError(`--port must be a port number from 0 to 65535 (got "${port}")`, 'serve')
    }
    const { serveCommand } = await import('./serve.ts')
    return serveCommand(config(), { port: port === undefined ? undefined : Number(port), host: values.host as string | undefined })
  },
  clients: (argv) => adminVerb('clients', argv, { create: 1, list: 0 }),
  keys: (argv) => adminVerb('keys', argv, { create: 0, list: 0, revoke: 1 }),
  episodes: (argv) => adminVerb('episodes', argv, { archive: 1 }),
  upload: async (argv) => (await import('./upload.ts')).uploadCommand(argv),
  webhooks: (argv) => adminVerb('webhooks', argv, { add: 1, list: 0, remove: 1 }),
  replay: async (argv) => {
    const { replayCommand } = await import('./replay.ts')
    return replayCommand(argv)
  },
}

function config(): EpisodicConfig {
  try {
    return readConfig(cliIO().env)
  } catch (error) {
    throw configError((error as Error).message)
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options']

function parse(argv: string[], options: Options, help: string): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
    if (parsed.values.help) {
      out(HELP[help])
      throw new CliError('', EXIT.ok)
    }
    return parsed
  } catch (error) {
    if (error instanceof CliError) throw error
    throw usageError((error as Error).message, help)
  }
}

async function adminVerb(group: string, argv: string[], subverbs: Record<string, number>): Promise<number> {
  const { values, positionals } = parse(argv, { client: { type: 'string' }, json: { type: 'boolean' } }, group)
  const [sub, ...rest] = positionals
  if (!sub || !(sub in subverbs)) throw usageError(`${group}: expected one of ${Object.keys(subverbs).join(', ')}`, group)
  const needsClient = (group === 'keys' && (sub === 'create' || sub === 'list')) || (group === 'webhooks' && sub !== 'remove')
  if (needsClient && !values.client) throw usageError(`${group} ${sub}: --client NAME is required`, group)
  // `keys revoke --client NAME` checks the key is that client's; elsewhere the flag would be silently ignored.
  const scopes = group === 'keys' && sub === 'revoke'
  if (!needsClient && !scopes && values.client !== undefined) throw usageError(`${group} ${sub}: --client is not an option of this verb`, group)
  if (rest.length !== subverbs[sub]) throw usageError(`${group} ${sub}: expected ${subverbs[sub]} argument(s), got ${rest.length}`, group)
  let args = needsClient ? [values.client as string, ...rest] : rest
  // `keys revoke` accepts the whole key too; only its id part is used.
  if (scopes) {
    args = [args[0]!.replace(/^epk_([a-z2-7]{12})_.*$/, '$1')]
    if (!KEY_ID.test(args[0]!)) throw usageError(`keys revoke: "${args[0]}" is not a key id (12 characters a-z, 2-7) or a key`, group)
    if (values.client !== undefined) args.push(values.client as string)
  }
  if (group === 'episodes' && !isUuid(args[0]!)) throw usageError(`episodes ${sub}: "${args[0]}" is not an episode id (a UUID)`, group)
  let result: unknown
  try {
    // Loaded here, not at start: the database drivers behind it cost every other verb ~0.1 s.
    const { runAdmin } = await import('./admin.ts')
    result = await runAdmin(config(), `${group}.${sub}`, args)
  } catch (error) {
    throw adminError(error, group)
  }
  printAdminResult(`${group}.${sub}`, result, Boolean(values.json))
  return EXIT.ok
}

const KEY_ID = /^[a-z2-7]{12}$/

/**
 * What the admin functions refuse, as the caller's mistake, never 1: a
 * malformed argument or one naming no client, key, episode or webhook is a
 * usage error (exit 2, as the webhooks verbs have it); a client that already
 * exists is about what is configured (exit 3).
 */
function adminError(error: unknown, group: string): unknown {
  if (!(error instanceof EpisodicError)) return error
  if (error.code === 'invalid' || error.code === 'not_found') return usageError(error.message, group)
  if (error.code === 'conflict') return configError(error.message)
  return error
}

/**
 * Runs the CLI with `argv` (without node and script) and returns the exit
 * code. With `io`, the command reads that environment and folder and writes
 * there instead of the process's (see io.ts).
 */
export async function main(argv: string[], io?: CliIO): Promise<number> {
  return await (io ? withIO(io, () => runVerb(argv)) : runVerb(argv))
}

async function runVerb(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv
  try {
    if (verb === '--version' || verb === '-V') {
      out(VERSION)
      return EXIT.ok
    }
    if (!verb || verb === '--help' || verb === '-h' || verb === 'help') {
      out(HELP.main)
      return verb ? EXIT.ok : EXIT.usage
    }
    const run = VERBS[verb]
    if (!run) throw usageError(`unknown verb "${verb}"`)
    return await run(rest)
  } catch (error) {
    if (error instanceof CliError) {
      if (error.message) err(`episodic: ${error.message}`)
      return error.exitCode
    }
    if (error instanceof EpisodicError && error.code !== 'internal') {
      err(`episodic: ${error.message}`)
      return error.code === 'invalid' || error.code === 'not_found' ? EXIT.usage : error.code === 'conflict' ? EXIT.config : EXIT.failure
    }
    err('episodic: unexpected failure:', error)
    return EXIT.failure
  }
}

const invokedDirectly = process.argv[1] && /(?:^|[\\/])(?:main\.[cm]?[jt]s|cli\.[cm]?js|episodic)$/.test(process.argv[1])
if (invokedDirectly) {
  // `npm run episodic -- ...` runs from the package's folder; the command is the user's, so
  // its files and its data folder (./.episodic) are those of where npm was called (INIT_CWD).
  if (process.env.npm_lifecycle_event === 'episodic' && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD)
  const argv = process.argv.slice(2)
  main(argv).then((code) => {
    if (code === EXIT.ok && argv[0] === 'serve') return // the server runs on
    // Exit once the output is written, rather than when the event loop runs dry: work the
    // command stopped waiting for (a policy call abandoned by --policy-timeout) must not
    // hold a finished command, and a CI gate behind it, open.
    let flushed = 0
    for (const stream of [process.stdout, process.stderr]) stream.write('', () => ++flushed === 2 && process.exit(code))
  })
}
