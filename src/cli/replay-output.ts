/** The lines `episodic replay run` prints (spec, "Command line"). */
import * as v from 'valibot'
import { significant } from '../eval/numbers.ts'
import { MaxOodActionShareSchema, MinEpisodesSchema } from '../eval/schemas.ts'
import { usageError } from './exit.ts'
import { METRICS, type MetricSummary, type RollupSummary } from '../eval/rollup.ts'
import type { EpisodeResult, EvalRunHandle } from '../replay/eval-run.ts'

export function headerLine(run: EvalRunHandle): string {
  const n = run.baselineEpisodeIds.length
  return `replay run: candidate ${run.candidatePolicyVersion} vs baseline ${run.baselinePolicyVersion ?? '(unspecified)'}, ${n} episode${n === 1 ? '' : 's'}${
    run.dryRun ? ' (dry run: no uploads)' : ''
  }`
}

export function runLine(run: EvalRunHandle): string {
  return run.id ? `eval run ${run.id}  ${run.portalUrl}` : 'eval run: none (dry run)'
}

/** `--resume`: how much of the run the earlier attempt left done. */
export function resumeLine(run: EvalRunHandle): string {
  const total = run.baselineEpisodeIds.length
  const failed = run.results.filter((r) => r.status === 'failed').length
  const left = total - run.results.length
  return `resuming: ${run.results.length} of ${total} episodes already have a result${failed ? ` (${failed} failed)` : ''}; replaying the other ${left}`
}

/** Flags that shape a new run: `--resume` goes on with the run as it was created, so they stay out. */
export const RUN_SHAPING_FLAGS = ['candidate-version', 'baseline-episodes', 'baseline-version', 'name', 'dry-run', 'min-episodes', 'max-ood-share'] as const

/**
 * The command that goes on with a run left pending: `--resume` and every flag
 * of this invocation that drives the policy or the output (`--policy`,
 * `--obs-map`, `--python`, `--concurrency`, ...), quoted for a POSIX shell,
 * so that pasting it replays the rest exactly as the first attempt would have.
 *
 * @example
 * resumeCommand('6f1c...', { policy: 'ws://gpu:8000', 'obs-map': 'state=observation/state', resume: undefined })
 * // "episodic replay run --resume 6f1c... --policy ws://gpu:8000 --obs-map state=observation/state"
 */
export function resumeCommand(runId: string, flags: Record<string, string | boolean | undefined>): string {
  const words = ['episodic', 'replay', 'run', '--resume', runId]
  for (const [flag, value] of Object.entries(flags)) {
    if (value === undefined || value === false || flag === 'resume' || flag === 'help') continue
    if ((RUN_SHAPING_FLAGS as readonly string[]).includes(flag)) continue
    words.push(`--${flag}`)
    if (value !== true) words.push(shellWord(value))
  }
  return words.join(' ')
}

/** `value` as one word for a POSIX shell: as it is when safe, else in single quotes. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`
}

export function episodeLine(result: EpisodeResult, dryRun: boolean): string {
  const prefix = `[${result.index}/${result.total}] ${result.baselineEpisodeId} ->`
  if (result.status === 'failed') return `${prefix} failed: ${firstLine(result.error)}`
  return `${prefix} ${result.replayEpisodeId ? result.replayEpisodeId.slice(0, 8) : dryRun ? '(dry run)' : '?'}`
}

const num = (x: number | null, signed = false) => (x === null ? '-' : significant(x, signed))

/** `better` / `worse` only when the 95% interval excludes no change; a point estimate alone is `no clear change`. */
export function mark(m: MetricSummary): string {
  if (m.delta === null) return 'not compared'
  if (m.significant === true) return m.delta_is_better ? 'better' : 'worse'
  return 'no clear change'
}

/**
 * The rollup table: per metric baseline, candidate and delta (three
 * significant digits, so -0.0004 stays -0.0004), the 95% interval of the
 * paired delta, the number of pairs and the mark.
 */
export function metricLines(summary: RollupSummary): string[] {
  const rows = METRICS.map((m) => {
    const s = summary[m.name]
    const interval = s.ci_low === null || s.ci_high === null ? '-' : `[${num(s.ci_low, true)}, ${num(s.ci_high, true)}]`
    return [m.name, num(s.baseline), num(s.candidate), num(s.delta, true), interval, String(s.n ?? 0), mark(s)]
  })
  const header = ['metric', 'baseline', 'candidate', 'delta', '95% interval', 'n', 'mark']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd())
}

/** Outcome metrics: the policy's own `_outcome` values are labelled as such, with how often it supplied them. */
export function provenanceLines(summary: RollupSummary): string[] {
  const lines: string[] = []
  for (const m of METRICS) {
    if (m.name === 'ood_action_share') continue
    const s = summary[m.name]
    if (!s.candidate_source || s.n === 0) continue
    const { reported, recorded } = s.candidate_source
    if (reported > 0) {
      lines.push(
        `${m.name}: candidate values reported by the policy in ${reported} of ${plural(s.n, 'episode')}${
          recorded > 0 ? `, copied from the baseline in ${recorded}` : ''
        }`,
      )
    } else if (recorded > 0) {
      lines.push(`${m.name}: candidate values copied from the baseline in ${recorded} of ${plural(s.n, 'episode')} (the policy reported none; delta 0 there)`)
    }
  }
  return lines
}

/**
 * What replay measures of the actions themselves (summary `action_divergence`):
 * the mean L2 distance to the recorded actions, raw and scale-free, and the
 * OOD share against the run's limit. Nothing when no episode had action metrics.
 */
export function divergenceLines(summary: RollupSummary): string[] {
  const d = summary.action_divergence
  if (!d || d.n === 0 || d.l2_mean === null) return []
  const normalized = d.l2_normalized_mean === null ? '' : ` (normalized by the recorded range: ${num(d.l2_normalized_mean)})`
  const ood = d.ood_action_share_mean === null
    ? ''
    : `; outside the recorded range in ${num(d.ood_action_share_mean * 100)}% of steps (limit ${num(d.max_ood_action_share * 100)}%)`
  return [`action divergence over ${plural(d.n, 'episode')}: mean L2 distance to the recorded actions ${num(d.l2_mean)}${normalized}${ood}`]
}

/** The verdict and its reasons, one per line. */
export function verdictLines(summary: RollupSummary): string[] {
  const needed = summary.verdict === 'inconclusive' && summary.episodes_needed !== null
    ? ` (about ${summary.episodes_needed} paired episodes would settle it)`
    : ''
  return [`verdict: ${String(summary.verdict).toUpperCase()}${needed}`, ...(summary.reasons ?? []).map((r) => `  - ${r}`)]
}

/** Said on every run: what replay can and cannot show. */
export const OPEN_LOOP_NOTE =
  'note: replay is open-loop: the candidate never changes what it observes (every step feeds the recorded observation), so outcome values are only what the policy reports or the baseline recorded; the action distance and OOD share are what replay measures.'

export function recommendationLine(summary: RollupSummary): string {
  const detail = `${summary.better_count} of ${summary.metric_total} comparable metrics improved on the point estimates`
  if (summary.recommend === 'ship') return `recommendation: SHIP (verdict ship; ${detail})`
  return `recommendation: HOLD (verdict ${summary.verdict ?? 'hold'}; ${detail})`
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

function firstLine(text: string | null): string {
  const line = (text ?? '').split('\n')[0] ?? ''
  return line.length > 160 ? `${line.slice(0, 157)}...` : line
}

/**
 * Steps whose actions held NaN or Infinity, over the done rows: those
 * components were left out of the action metrics, which then measured less
 * than the run suggests. Nothing when there were none.
 */
export function nonfiniteLines(rows: ReadonlyArray<Pick<EpisodeResult, 'status' | 'metrics'>>): string[] {
  let steps = 0
  let total = 0
  let episodes = 0
  for (const row of rows) {
    if (row.status !== 'done' || !row.metrics) continue
    const bad = Number(row.metrics.nonfinite_steps ?? 0)
    total += Number(row.metrics.steps ?? 0)
    steps += bad
    if (bad > 0) episodes++
  }
  if (steps === 0) return []
  return [
    `warning: the policy returned non-finite actions (NaN or Infinity) at ${steps} of ${total} steps, in ${
      plural(episodes, 'episode')
    }; those components are left out of the action metrics`,
  ]
}

/** Everything after the progress lines: the table, action divergence, non-finite actions, provenance, the verdict, the open-loop note, the recommendation (last, as the spec says). */
export function summaryLines(summary: RollupSummary, rows: ReadonlyArray<Pick<EpisodeResult, 'status' | 'metrics'>> = []): string[] {
  return [
    ...metricLines(summary),
    ...divergenceLines(summary),
    ...nonfiniteLines(rows),
    ...provenanceLines(summary),
    ...verdictLines(summary),
    OPEN_LOOP_NOTE,
    recommendationLine(summary),
  ]
}

/** `--min-episodes` and `--max-ood-share` as numbers, checked by the eval-run create body's own rules. */
export function verdictThresholds(minEpisodes: string | undefined, maxOodShare: string | undefined): { minEpisodes?: number; maxOodActionShare?: number } {
  const out: { minEpisodes?: number; maxOodActionShare?: number } = {}
  if (minEpisodes !== undefined) out.minEpisodes = flagNumber('min-episodes', minEpisodes, MinEpisodesSchema)
  if (maxOodShare !== undefined) out.maxOodActionShare = flagNumber('max-ood-share', maxOodShare, MaxOodActionShareSchema)
  return out
}

function flagNumber(flag: string, text: string, schema: v.GenericSchema<number>): number {
  // Plain decimal digits (an optional fraction) only: Number('') is 0, Number('0x10') 16.
  const n = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(text) ? Number(text) : NaN
  const result = v.safeParse(schema, n)
  if (!result.success) throw usageError(`--${flag} ${result.issues[0].message}, got "${text}"`, 'replay')
  return result.output
}
