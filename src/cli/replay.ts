/**
 * `episodic replay run`: replays a candidate policy over baseline episodes on
 * this machine, uploads per-episode metrics and prints the rollup.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { inflateRawSync } from 'node:zlib'
import { EpisodicClient } from '../client/client.ts'
import { AuthError, ConfigurationError, EpisodicClientError, NotFoundError, TransportError } from '../client/errors.ts'
import type { RollupSummary } from '../eval/rollup.ts'
import { createZlibInflate } from '../replay/npz/index.ts'
import { completeRun, createRun, runAgainst } from '../replay/run.ts'
import { CliError, EXIT, configError, usageError } from './exit.ts'
import { HELP } from './help.ts'
import { loadPolicy } from './policy.ts'
import { episodeLine, headerLine, metricLines, recommendationLine, runLine } from './replay-output.ts'

const OPTIONS = {
  policy: { type: 'string' },
  'candidate-version': { type: 'string' },
  'baseline-episodes': { type: 'string' },
  'baseline-version': { type: 'string' },
  name: { type: 'string' },
  'dry-run': { type: 'boolean' },
  profile: { type: 'string' },
  'fail-on-hold': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

export async function replayCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  if (!sub || sub === '--help' || sub === '-h') {
    console.log(HELP.replay)
    return sub ? EXIT.ok : EXIT.usage
  }
  if (sub !== 'run') throw usageError(`replay: unknown verb "${sub}" (expected "run")\n\n${HELP.replay}`)
  let values
  try {
    ;({ values } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: false, strict: true }))
  } catch (error) {
    throw usageError(`${(error as Error).message}\n\n${HELP.replay}`)
  }
  if (values.help) {
    console.log(HELP.replay)
    return EXIT.ok
  }
  for (const flag of ['policy', 'candidate-version', 'baseline-episodes'] as const) {
    if (!values[flag]) throw usageError(`replay run: --${flag} is required\n\n${HELP.replay}`)
  }
  const ids = baselineIds(values['baseline-episodes']!)
  const policy = await loadPolicy(values.policy!, process.cwd())
  const dryRun = Boolean(values['dry-run'])
  try {
    const client = await EpisodicClient.connect({ profile: values.profile })
    const run = await createRun({
      candidatePolicyVersion: values['candidate-version']!,
      baselineEpisodeIds: ids,
      baselinePolicyVersion: values['baseline-version'],
      name: values.name,
      client,
      dryRun,
    })
    console.log(headerLine(run))
    console.log(runLine(run))
    await runAgainst(run, policy, {
      dryRun,
      inflate: createZlibInflate(inflateRawSync),
      onEpisode: (result) => console.log(episodeLine(result, dryRun)),
    })
    const { summary } = (await completeRun(run)) as { summary: RollupSummary }
    for (const line of metricLines(summary)) console.log(line)
    console.log(recommendationLine(summary))
    return summary.recommend === 'hold' && values['fail-on-hold'] ? EXIT.hold : EXIT.ok
  } catch (error) {
    throw asCliError(error)
  }
}

/** `a,b,c` or `@file` with one id per line (blank lines ignored). */
function baselineIds(value: string): string[] {
  let list: string[]
  if (value.startsWith('@')) {
    const file = resolve(value.slice(1))
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      throw configError(`--baseline-episodes: cannot read ${file}`)
    }
    list = text.split(/\r?\n/)
  } else list = value.split(',')
  const ids = list.map((s) => s.trim()).filter(Boolean)
  if (ids.length === 0) throw usageError('--baseline-episodes: no episode ids given')
  return ids
}

function asCliError(error: unknown): unknown {
  if (!(error instanceof EpisodicClientError)) return error
  if (error instanceof ConfigurationError) return new CliError(error.message, EXIT.config)
  if (error instanceof AuthError) return new CliError(`authentication failed: ${error.message}`, EXIT.auth)
  if (error instanceof NotFoundError) return new CliError(`not found (unknown, or not this key's client): ${error.message}`, EXIT.auth)
  if (error instanceof TransportError) return new CliError(error.message, EXIT.transport)
  return new CliError(`${error.name}: ${error.message}`, EXIT.failure)
}
