/**
 * The verdict (contract, "Paired rollup, uncertainty and the verdict"), with
 * the reasons a person reads, most important first:
 *
 * 1. `hold` when a result row failed, when success or collisions are
 *    significantly worse, or when the candidate's mean OOD action share is
 *    above `max_ood_action_share` (replayed outcomes then say little);
 * 2. `ship` when there are at least `min_episodes` done rows, the majority
 *    rule holds on the point estimates, at least one metric is
 *    significantly better and none is significantly worse;
 * 3. `inconclusive` otherwise, with `episodes_needed` for the most important
 *    metric the data has not decided yet.
 */
import type { RollupColumns } from './columns.ts'
import { formatDelta, formatValue, significant } from './numbers.ts'
import { clean, differences, meanOf, type MetricName, METRICS, type MetricSpec, pairedTable } from './metric-table.ts'
import type { MetricSummary } from './rollup.ts'
import { pairedBinarySampleSize, pairedMeanSampleSize } from './stats/sample-size.ts'

/**
 * The eval run's decision: `ship` (the candidate is better with enough
 * evidence), `hold` (something got worse or failed) or `inconclusive` (too
 * little data to say; see `episodes_needed`).
 */
export type Verdict = 'ship' | 'hold' | 'inconclusive'

/** How far the candidate's actions are from the recorded ones, over done rows. */
export interface ActionDivergence {
  /** Done rows with action metrics. */
  n: number
  /** Mean over those rows of `action_l2_mean`; null without one. */
  l2_mean: number | null
  /** Mean over those rows of `action_l2_normalized_mean` (scale-free); null without one. */
  l2_normalized_mean: number | null
  /** Mean over those rows of `ood_action_share_candidate`; above `max_ood_action_share` the verdict is `hold`. */
  ood_action_share_mean: number | null
  /** The run's threshold for `ood_action_share_mean`. */
  max_ood_action_share: number
}

export interface VerdictInput {
  metrics: { [K in MetricName]: MetricSummary }
  columns: RollupColumns
  pairsOf: { [K in MetricName]: Int32Array }
  better_count: number
  metric_total: number
  minEpisodes: number
  maxOodActionShare: number
}

export interface VerdictOutput {
  verdict: Verdict
  reasons: string[]
  min_episodes: number
  episodes_needed: number | null
  action_divergence: ActionDivergence
}

/** Which undecided metric `episodes_needed` speaks for first: safety and success before the rest. */
const IMPORTANCE: ReadonlyArray<MetricName> = ['success_rate', 'collision_rate', 'reward_mean', 'time_to_goal_s', 'ood_action_share']

const spec = (name: MetricName) => METRICS.find((m) => m.name === name)!
const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
const percent = (x: number) => `${significant(x * 100)}%`

/** `mean reward 10 -> 12 (+2, 95% interval +0.8 to +3.3, n=12)`; without the label after a sentence that names the metric. */
export function describeMetric(s: MetricSpec, m: MetricSummary, label = true): string {
  const interval = m.ci_low === null || m.ci_high === null
    ? 'no interval'
    : `95% interval ${formatDelta(s.name, m.ci_low)} to ${formatDelta(s.name, m.ci_high)}`
  return `${label ? `${s.label} ` : ''}${formatValue(s.name, m.baseline)} -> ${formatValue(s.name, m.candidate)} (${
    formatDelta(s.name, m.delta)
  }, ${interval}, n=${m.n})`
}

const worse = (m: MetricSummary) => m.delta_is_better === false && m.delta !== 0
const significantlyBetter = (m: MetricSummary) => m.significant === true && m.delta_is_better === true
const significantlyWorse = (m: MetricSummary) => m.significant === true && m.delta_is_better === false

function actionDivergence(columns: RollupColumns, max: number): ActionDivergence {
  const ood = columns.metrics.ood_action_share.candidate
  let n = 0
  for (let i = 0; i < columns.length; i++) {
    if (columns.l2[i] === columns.l2[i] || columns.l2Normalized[i] === columns.l2Normalized[i] || ood[i] === ood[i]) n++
  }
  return {
    n,
    l2_mean: meanOf(columns.l2),
    l2_normalized_mean: meanOf(columns.l2Normalized),
    ood_action_share_mean: meanOf(ood),
    max_ood_action_share: max,
  }
}

/** Paired episodes that would resolve `name` at its observed effect (80% power, two-sided 5%), or null. */
function sampleSize(input: VerdictInput, name: MetricName): number | null {
  const m = input.metrics[name]
  const pairs = input.pairsOf[name]
  if (m.delta === null || m.delta === 0 || pairs.length === 0) return null
  const side = input.columns.metrics[spec(name).column]
  if (spec(name).method === 'newcombe_paired') {
    const t = pairedTable(side, pairs)
    return pairedBinarySampleSize((t.candidateOnly + t.baselineOnly) / pairs.length, (t.candidateOnly - t.baselineOnly) / pairs.length)
  }
  if (pairs.length < 2) return null
  const d = differences(side, pairs)
  let mean = 0
  for (const x of d) mean += x / d.length
  let ss = 0
  for (const x of d) ss += (x - mean) ** 2
  return pairedMeanSampleSize(Math.sqrt(ss / (d.length - 1)), mean)
}

/** The outcome metrics whose candidate values come from `_outcome` or, without it, from the recording. */
const OUTCOMES: ReadonlyArray<MetricName> = ['success_rate', 'collision_rate', 'reward_mean', 'time_to_goal_s']

/**
 * What replay measured, as sentences after the deciding reasons: values
 * copied from the recording cannot change, so a run whose policy reported
 * no outcome measured only its actions; and outcomes a policy reported with
 * no action metrics in any done episode rest on its word alone. None when
 * every candidate outcome was reported and its actions were measured (or no
 * row said where its values came from).
 */
function measuredNotes(metrics: VerdictInput['metrics'], divergence: ActionDivergence, done: number): string[] {
  const source = (name: MetricName) => metrics[name].candidate_source
  const copied = OUTCOMES.filter((name) => source(name).reported === 0 && source(name).recorded > 0)
  const partly = OUTCOMES.filter((name) => source(name).reported > 0 && source(name).recorded > 0)
  if (OUTCOMES.every((name) => source(name).reported === 0)) {
    if (copied.length === 0) return []
    const actions = [
      divergence.l2_mean === null ? null : `a mean L2 distance of ${significant(divergence.l2_mean)} from the recorded actions`,
      divergence.ood_action_share_mean === null ? null : `${percent(divergence.ood_action_share_mean)} of steps outside the recorded action range`,
    ].filter((x) => x !== null)
    return [
      `The policy reported no outcomes (no _outcome), so its success, reward, collisions and time to goal are the recording's and cannot differ from it; replay measured only its actions${
        actions.length ? `: ${actions.join(', ')}` : ', and no action metric either'
      }.`,
    ]
  }
  const notes: string[] = []
  const parts: string[] = []
  if (copied.length > 0) {
    parts.push(
      `${capital(listOf(copied.map((name) => spec(name).label)))} ${
        copied.length === 1 ? 'is' : 'are'
      } the recording's (the policy reported none through _outcome)`,
    )
  }
  for (const name of partly) {
    const { reported, recorded } = source(name)
    parts.push(
      `${parts.length ? spec(name).label : capital(spec(name).label)}: ${reported} of ${reported + recorded} candidate values reported, the rest copied`,
    )
  }
  if (parts.length) notes.push(`${parts.join('; ')}; a copied value cannot differ from the recording.`)
  if (divergence.n === 0 && done > 0) {
    notes.push(
      "No done episode has action metrics (none of the policy's action keys paired with the recording's): nothing replay measured backs the outcomes the policy reported.",
    )
  }
  return notes
}

const listOf = (words: string[]) => words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`

/** Applies the contract's three rules in order, words the decision, and says what replay measured. */
export function decideVerdict(input: VerdictInput): VerdictOutput {
  const decided = decide(input)
  const notes = measuredNotes(input.metrics, decided.action_divergence, input.columns.episodes.done)
  return notes.length === 0 ? decided : { ...decided, reasons: [...decided.reasons, ...notes] }
}

/** The contract's three rules in order, with the reasons that decided. */
function decide(input: VerdictInput): VerdictOutput {
  const { metrics, columns, better_count, metric_total, minEpisodes } = input
  const divergence = actionDivergence(columns, input.maxOodActionShare)
  const base = { min_episodes: minEpisodes, action_divergence: divergence }
  const { done, failed } = columns.episodes

  const hold: string[] = []
  if (failed > 0) hold.push(`${plural(failed, 'episode')} failed (the policy raised or the replay broke); a failed episode blocks ship.`)
  for (const name of ['success_rate', 'collision_rate'] as const) {
    if (significantlyWorse(metrics[name])) {
      hold.push(`${capital(spec(name).label)} is significantly worse: ${describeMetric(spec(name), metrics[name], false)}.`)
    }
  }
  const ood = divergence.ood_action_share_mean
  if (ood !== null && ood > input.maxOodActionShare) {
    hold.push(
      `The candidate acted outside the recorded action range in ${percent(ood)} of steps on average, above the limit of ${
        percent(input.maxOodActionShare)
      } (max_ood_action_share): replayed outcomes say little when the candidate acts this differently from the recording.`,
    )
  }
  if (hold.length > 0) return { verdict: 'hold', reasons: hold, episodes_needed: null, ...base }

  const better = METRICS.filter((s) => significantlyBetter(metrics[s.name]))
  const worseSig = METRICS.filter((s) => significantlyWorse(metrics[s.name]))
  const enough = done >= minEpisodes
  const majority = metric_total >= 1 && 3 * better_count >= 2 * metric_total
  const safetyWorse = (['success_rate', 'collision_rate'] as const).filter((name) => worse(metrics[name]))
  const majorityText = `${better_count} of ${plural(metric_total, 'comparable metric')} improved on the point estimates (ship needs two thirds)`

  const shipButCount = majority && safetyWorse.length === 0 && better.length > 0 && worseSig.length === 0
  if (enough && shipButCount) {
    return {
      verdict: 'ship',
      reasons: [
        `Significantly better: ${better.map((s) => describeMetric(s, metrics[s.name])).join('; ')}.`,
        `${capital(majorityText)}, and neither success rate nor collision rate got worse.`,
        `${plural(done, 'episode')} done, at least the ${minEpisodes} required (min_episodes); no metric is significantly worse.`,
      ],
      episodes_needed: null,
      ...base,
    }
  }

  const reasons: string[] = []
  for (const s of worseSig) reasons.push(`${capital(s.label)} is significantly worse: ${describeMetric(s, metrics[s.name], false)}.`)
  for (const name of safetyWorse) {
    reasons.push(`${capital(spec(name).label)} got worse on the point estimate, though not significantly: ${describeMetric(spec(name), metrics[name], false)}.`)
  }
  if (better.length === 0) {
    const compared = METRICS.filter((s) => metrics[s.name].delta !== null)
    reasons.push(
      compared.length === 0
        ? 'No metric could be compared: no done episode has both a baseline and a candidate value.'
        : `No metric is significantly better: ${compared.map((s) => describeMetric(s, metrics[s.name])).join('; ')}.`,
    )
  }
  if (metric_total >= 1 && !majority) reasons.push(`Only ${majorityText}.`)
  if (!enough) reasons.push(`Only ${plural(done, 'episode')} done; ship needs at least ${minEpisodes} (min_episodes).`)

  let episodes_needed: number | null = null
  const undecided = IMPORTANCE.find((name) => metrics[name].significant !== true && sampleSize(input, name) !== null)
  if (undecided) {
    const estimate = Math.max(sampleSize(input, undecided)!, minEpisodes)
    episodes_needed = estimate
    const m = metrics[undecided]
    reasons.push(
      `About ${estimate} paired episodes would resolve ${spec(undecided).label} at its observed effect (${
        formatDelta(undecided, clean(m.delta!))
      }) with 80% power at the two-sided 5% level.`,
    )
  } else if (!enough && shipButCount) {
    // Only the count stands between this run and ship, so the count settles it. Otherwise
    // no undecided metric has an effect to plan for (all deltas zero, say): null.
    episodes_needed = minEpisodes
  }
  return { verdict: 'inconclusive', reasons, episodes_needed, ...base }
}
