/**
 * `episodic replay run`: replays a candidate policy over baseline episodes on
 * this machine, uploads per-episode metrics and prints the rollup.
 */
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { jsonText } from '../http/json.ts'
import { inflateRawSync } from 'node:zlib'
import { EpisodicClient } from '../client/client.ts'
import { runtimeEnvironment } from '../client/environment.ts'
import { ConflictError, ValidationError } from '../client/errors.ts'
import { isUuid } from '../http/fields.ts'
import type { RollupSummary } from '../eval/rollup.ts'
import { createZlibInflate } from '../replay/npz/index.ts'
import { completeRun, createRun, type EpisodeResult, type EvalRunHandle, resumeRun } from '../replay/eval-run.ts'
import { runAgainst } from '../replay/run.ts'
import { clientCliError, CliError, configError, EXIT, usageError } from './exit.ts'
import { HELP } from './help.ts'
import { nodeFetch } from './http-fetch.ts'
import { cliIO, err, out } from './io.ts'
import { loadPolicy } from './policy.ts'
import { episodeLine, headerLine, resumeCommand, resumeLine, RUN_SHAPING_FLAGS, runLine, summaryLines, verdictThresholds } from './replay-output.ts'

const OPTIONS = {
  policy: { type: 'string' },
  'candidate-version': { type: 'string' },
  'baseline-episodes': { type: 'string' },
  'baseline-version': { type: 'string' },
  name: { type: 'string' },
  'dry-run': { type: 'boolean' },
  resume: { type: 'string' },
  profile: { type: 'string' },
  'fail-on-hold': { type: 'boolean' },
  'min-episodes': { type: 'string' },
  'max-ood-share': { type: 'string' },
  'upload-actions': { type: 'boolean' },
  // Policy kinds and throughput (docs/python-policies.md).
  python: { type: 'string' },
  'obs-map': { type: 'string' },
  'action-map': { type: 'string' },
  'action-horizon': { type: 'string' },
  'policy-timeout': { type: 'string' },
  prompt: { type: 'string' },
  'prompt-field': { type: 'string' },
  concurrency: { type: 'string' },
  'prefetch-mb': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

export async function replayCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  if (!sub || sub === '--help' || sub === '-h') {
    out(HELP.replay)
    return sub ? EXIT.ok : EXIT.usage
  }
  if (sub !== 'run') throw usageError(`replay: unknown verb "${sub}" (expected "run")`, 'replay')
  let values
  try {
    ;({ values } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: false, strict: true }))
  } catch (error) {
    throw usageError((error as Error).message, 'replay')
  }
  if (values.help) {
    out(HELP.replay)
    return EXIT.ok
  }
  const resume = values.resume?.trim()
  if (values.resume !== undefined) checkResume(values)
  for (const flag of ['policy', ...(resume ? [] : ['candidate-version', 'baseline-episodes'] as const)] as const) {
    if (!values[flag]?.trim()) throw usageError(`replay run: --${flag} is required`, 'replay')
  }
  const ids = resume ? [] : baselineIds(values['baseline-episodes']!)
  const thresholds = verdictThresholds(values['min-episodes'], values['max-ood-share'])
  const concurrency = wholeNumber(values.concurrency, '--concurrency', 1, 1)
  const prefetchMb = wholeNumber(values['prefetch-mb'], '--prefetch-mb', 256, 0)
  const actionHorizon = values['action-horizon'] === undefined ? undefined : wholeNumber(values['action-horizon'], '--action-horizon', 1, 1)
  const timeoutMs = values['policy-timeout'] === undefined ? undefined : seconds(values['policy-timeout'], '--policy-timeout') * 1000
  const policy = await loadPolicy(values.policy!, cliIO().cwd, {
    python: values.python,
    obsMap: values['obs-map'],
    actionMap: values['action-map'],
    actionHorizon,
    timeoutMs,
    prompt: values.prompt,
    promptField: values['prompt-field'],
    policyApiKey: cliIO().env.EPISODIC_POLICY_API_KEY || undefined,
  })
  const dryRun = Boolean(values['dry-run'])
  if (!resume) checkBaselineIds(ids)
  // With --json, stdout carries one JSON document (for jq and CI scripts) and the
  // human progress lines go to stderr.
  const json = Boolean(values.json)
  const say = json ? (line: string) => err(line) : (line: string) => out(line)
  // Set once a recorded run exists and until it is finalized: a failure in between leaves it pending.
  let pending: EvalRunHandle | undefined
  const stays = (run: EvalRunHandle) =>
    `eval run ${run.id} stays pending with ${run.results.length} of ${run.baselineEpisodeIds.length} results (${run.portalUrl})\n` +
    `  go on with: ${resumeCommand(run.id!, values)}`
  let started: EvalRunHandle | undefined
  // Ctrl-C or SIGTERM: say where the run stands instead of vanishing (a recorded run keeps the results so far and
  // stays pending), and stop the policy's process first (a Python policy may be loading or inside a step, holding a GPU).
  const onSignal = (signal: NodeJS.Signals) => {
    const run = started
    err(
      !run
        ? 'episodic: interrupted before the run started'
        : run.id === null
        ? 'episodic: interrupted (a dry run: nothing was stored)'
        : `episodic: interrupted; ${stays(run)}`,
    )
    // Bounded: a policy server that no longer answers would hold a WebSocket close for 30 s.
    const closed = Promise.race([Promise.resolve(policy.close?.()).catch(() => {}), new Promise((resolve) => setTimeout(resolve, 3_000))])
    void closed.finally(() => process.exit(signal === 'SIGTERM' ? 143 : signal === 'SIGHUP' ? 129 : EXIT.interrupted))
  }
  // SIGHUP too: a supervisor's, or a terminal closing on this process alone.
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal).once('SIGHUP', onSignal)
  try {
    // Start the Python process or connect before opening a run, so a policy that cannot load leaves no run behind.
    await policy.open?.()
    const client = await EpisodicClient.connect({ profile: values.profile, fetch: nodeFetch, environment: { ...runtimeEnvironment(), env: cliIO().env } })
    const run = resume ? await resumed(resume, client) : await createRun({
      candidatePolicyVersion: values['candidate-version']!,
      baselineEpisodeIds: ids,
      baselinePolicyVersion: values['baseline-version'],
      name: values.name,
      client,
      dryRun,
      ...thresholds,
    }).catch((error: unknown) => {
      // Nothing but the flags goes into the create body: a value the service refuses is the caller's (exit 2).
      if (error instanceof ValidationError) throw usageError(`replay run: ${error.message.replace(/^POST \S+: /, '')}`, 'replay')
      throw error
    })
    if (run.id !== null) pending = run
    say(headerLine(run))
    say(runLine(run))
    if (resume) say(resumeLine(run))
    started = run
    const results = await runAgainst(run, policy, {
      dryRun,
      uploadActions: Boolean(values['upload-actions']),
      inflate: createZlibInflate(inflateRawSync),
      concurrency,
      prefetch: prefetchMb === 0 ? false : { bytes: prefetchMb * 1024 * 1024 },
      // A baseline whose archives would inflate past half the machine's memory fails, rather than the run.
      maxInflatedBytes: Math.floor(totalmem() / 2),
      onEpisode: (result) => say(episodeLine(result, dryRun)),
      stderr: (text) => err(text),
    })
    const { summary } = (await completeRun(run)) as { summary: RollupSummary }
    pending = undefined
    // A resumed run reports every row, those of the earlier attempt too.
    const rows = run.results
    for (const line of summaryLines(summary, rows)) say(line)
    if (json) out(jsonText(jsonReport(run, rows, summary), 2))
    if (results.length > 0 && rows.every((r) => r.status === 'failed')) {
      err(`episodic: every episode failed (${rows.length} of ${rows.length}); nothing was compared`)
      return EXIT.allFailed
    }
    if (!values['fail-on-hold'] || summary.verdict === 'ship') return EXIT.ok
    return summary.verdict === 'inconclusive' ? EXIT.inconclusive : EXIT.hold
  } catch (error) {
    const failure = clientCliError(error, cliIO().env)
    // A network failure or a refused key mid-run: the results so far are kept; say how to go on.
    if (pending && failure instanceof CliError) failure.message += `\n${stays(pending)}`
    else if (pending) err(`episodic: ${stays(pending)}`)
    throw failure
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal).off('SIGHUP', onSignal)
    await policy.close?.()
  }
}

/** Flags that shape a new run have no place beside --resume, which goes on with the run as it was created. */
function checkResume(values: Record<string, string | boolean | undefined>): void {
  const id = String(values.resume).trim()
  if (!isUuid(id)) throw usageError(`--resume: "${id}" is not an eval run id (a UUID)`, 'replay')
  for (const flag of RUN_SHAPING_FLAGS) {
    if (values[flag] !== undefined) throw usageError(`--resume goes on with the run as it was created: drop --${flag}`, 'replay')
  }
}

/** The pending run to go on with; a completed one is the caller's mistake (exit 2), as a malformed id is. */
async function resumed(id: string, client: EpisodicClient): Promise<EvalRunHandle> {
  try {
    return await resumeRun({ evalRunId: id, client })
  } catch (error) {
    if (error instanceof ConflictError) throw usageError(`--resume: ${error.message}`, 'replay')
    throw error
  }
}

/** The `--json` document: the run, every episode's result and the summary, wire names as in the API. */
function jsonReport(run: EvalRunHandle, results: EpisodeResult[], summary: RollupSummary): Record<string, unknown> {
  return {
    eval_run_id: run.id,
    name: run.name,
    candidate_policy_version: run.candidatePolicyVersion,
    baseline_policy_version: run.baselinePolicyVersion,
    dry_run: run.dryRun,
    portal_url: run.portalUrl,
    results: results.map((r) => ({
      baseline_episode_id: r.baselineEpisodeId,
      status: r.status,
      replay_episode_id: r.replayEpisodeId,
      error: r.error,
      metrics: r.metrics,
    })),
    summary,
  }
}

/** A whole-number flag value (default when absent); a usage error names the flag otherwise. */
function wholeNumber(value: string | undefined, flag: string, fallback: number, min: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!/^\d+$/.test(value.trim()) || n < min) throw usageError(`${flag} must be a whole number >= ${min} (got "${value}")`, 'replay')
  return n
}

/** A positive number of seconds, fractions allowed (`0.5`, `30`), at most a day. */
function seconds(value: string, flag: string): number {
  const n = Number(value)
  if (!/^\s*\d*\.?\d+\s*$/.test(value) || !(n > 0 && n <= 86_400)) {
    throw usageError(`${flag} must be a number of seconds > 0 and <= 86400 (got "${value}")`, 'replay')
  }
  return n
}

/** `a,b,c` or `@file` with one id per line (blank lines ignored). */
function baselineIds(value: string): string[] {
  let list: string[]
  if (value.startsWith('@')) {
    const file = resolve(cliIO().cwd, value.slice(1))
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      throw configError(`--baseline-episodes: cannot read ${file}`)
    }
    list = text.split(/\r?\n/)
  } else list = value.split(',')
  const ids = list.map((s) => s.trim()).filter(Boolean)
  if (ids.length === 0) throw usageError('--baseline-episodes: no episode ids given', 'replay')
  return ids
}

/**
 * A malformed id is the caller's typo (exit 2, before any request), not an id
 * the key cannot see (exit 4); so is a repeated one (the service refuses
 * them, and a dry run previews what a real run would do).
 */
function checkBaselineIds(ids: string[]): void {
  const seen = new Set<string>()
  for (const id of ids) {
    if (!isUuid(id)) throw usageError(`--baseline-episodes: "${id}" is not an episode id (a UUID)`, 'replay')
    if (seen.has(id.toLowerCase())) throw usageError(`--baseline-episodes: ${id} is listed twice`, 'replay')
    seen.add(id.toLowerCase())
  }
}
