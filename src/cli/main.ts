#!/usr/bin/env node
/**
 * The `episodic` command. Only this folder (and adapters/) touches `process`
 * and `node:*`; everything else is the runtime-agnostic core.
 */
import { parseArgs } from 'node:util'
import { readConfig, type EpisodicConfig } from '../config.ts'
import { EpisodicError } from '../errors.ts'
import { runAdmin } from './admin.ts'
import { CliError, EXIT, configError, usageError } from './exit.ts'
import { HELP } from './help.ts'
import { printAdminResult } from './print.ts'

type Verb = (argv: string[]) => Promise<number>

const VERBS: Record<string, Verb> = {
  serve: async (argv) => {
    const { values } = parse(argv, { port: { type: 'string' }, host: { type: 'string' } }, 'serve')
    const { serveCommand } = await import('./serve.ts')
    return serveCommand(config(), { port: values.port as string | undefined, host: values.host as string | undefined })
  },
  clients: (argv) => adminVerb('clients', argv, { create: 1, list: 0 }),
  keys: (argv) => adminVerb('keys', argv, { create: 0, list: 0, revoke: 1 }),
  episodes: (argv) => adminVerb('episodes', argv, { archive: 1 }),
  replay: async (argv) => {
    const { replayCommand } = await import('./replay.ts')
    return replayCommand(argv)
  },
}

function config(): EpisodicConfig {
  try {
    return readConfig(process.env)
  } catch (error) {
    throw configError((error as Error).message)
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options']

function parse(argv: string[], options: Options, help: string): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
    if (parsed.values.help) {
      console.log(HELP[help])
      throw new CliError('', EXIT.ok)
    }
    return parsed
  } catch (error) {
    if (error instanceof CliError) throw error
    throw usageError(`${(error as Error).message}\n\n${HELP[help]}`)
  }
}

async function adminVerb(group: string, argv: string[], subverbs: Record<string, number>): Promise<number> {
  const { values, positionals } = parse(argv, { client: { type: 'string' }, json: { type: 'boolean' } }, group)
  const [sub, ...rest] = positionals
  if (!sub || !(sub in subverbs)) throw usageError(`${group}: expected one of ${Object.keys(subverbs).join(', ')}\n\n${HELP[group]}`)
  const needsClient = group === 'keys' && (sub === 'create' || sub === 'list')
  if (needsClient && !values.client) throw usageError(`keys ${sub}: --client NAME is required`)
  if (rest.length !== subverbs[sub]) throw usageError(`${group} ${sub}: expected ${subverbs[sub]} argument(s), got ${rest.length}\n\n${HELP[group]}`)
  let args = needsClient ? [values.client as string] : rest
  // `keys revoke` accepts the whole key too; only its id part is used.
  if (group === 'keys' && sub === 'revoke') args = [args[0]!.replace(/^epk_([a-z2-7]{12})_.*$/, '$1')]
  const result = await runAdmin(config(), `${group}.${sub}`, args)
  printAdminResult(`${group}.${sub}`, result, Boolean(values.json))
  return EXIT.ok
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv
  try {
    if (!verb || verb === '--help' || verb === '-h' || verb === 'help') {
      console.log(HELP.main)
      return verb ? EXIT.ok : EXIT.usage
    }
    const run = VERBS[verb]
    if (!run) throw usageError(`unknown verb "${verb}"\n\n${HELP.main}`)
    return await run(rest)
  } catch (error) {
    if (error instanceof CliError) {
      if (error.message) console.error(`episodic: ${error.message}`)
      return error.exitCode
    }
    if (error instanceof EpisodicError && error.code !== 'internal') {
      console.error(`episodic: ${error.message}`)
      return error.code === 'invalid' ? EXIT.usage : EXIT.failure
    }
    console.error('episodic: unexpected failure:', error)
    return EXIT.failure
  }
}

const invokedDirectly = process.argv[1] && /(?:^|[\\/])(?:main\.[cm]?[jt]s|cli\.[cm]?js|episodic)$/.test(process.argv[1])
if (invokedDirectly) {
  main(process.argv.slice(2)).then((code) => {
    if (code !== EXIT.ok || !process.argv.includes('serve')) process.exitCode = code
  })
}
