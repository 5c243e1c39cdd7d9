/** @jsxImportSource hono/jsx */
/**
 * The rollup part of the eval-run page: the verdict with its reasons, the
 * metric table (per metric baseline, candidate, delta with its 95% interval
 * drawn as an error bar, n, where the candidate values came from, and a
 * mark that says "better" or "worse" only when the interval excludes no
 * change), and the action divergence. Everything is read from the summary
 * the server stored at finalize (the rules live in src/eval/verdict.ts;
 * these only show them). Summaries stored before 0.2 lack the new keys and
 * show what they have.
 */
import { type MetricName, METRICS, type MetricSummary } from '../eval/rollup.ts'
import { formatDelta, formatMetric, formatNumber, NONE } from './format.ts'

/** The run's recommendation as a badge, or a dash while it has none. */
export function Recommend(props: { summary: Record<string, unknown> | null }) {
  const recommend = props.summary?.recommend
  if (recommend !== 'ship' && recommend !== 'hold') return <span class='muted'>{NONE}</span>
  const verdict = props.summary?.verdict
  const label = verdict === 'inconclusive' ? 'hold (inconclusive)' : recommend
  return <span class={`badge r-${verdict === 'inconclusive' ? 'inconclusive' : recommend}`}>{label}</span>
}

/** Better or worse only with the interval clear of zero; the point estimate alone is "no clear change". */
export function mark(m: MetricSummary): { className: string; text: string } {
  if (m.delta === null || m.delta_is_better === null) return { className: 'na', text: 'n/a' }
  if (m.significant === true) return m.delta_is_better ? { className: 'better', text: '✓ better' } : { className: 'worse', text: '✗ worse' }
  if (m.delta === 0 && (m.ci_low === null || (m.ci_low === 0 && m.ci_high === 0))) return { className: 'same', text: '= unchanged' }
  return { className: 'same', text: '~ no clear change' }
}

const BAR_W = 120
const BAR_H = 16

/**
 * The 95% interval of the delta as a horizontal error bar around a dot at the
 * delta, with a dashed line at zero; the scale is the row's own, symmetric
 * around zero, so the picture shows whether the bar crosses zero.
 */
export function ErrorBar(props: { m: MetricSummary; name: MetricName }) {
  const { m } = props
  if (m.delta === null || m.ci_low === null || m.ci_high === null) return null
  const reach = Math.max(Math.abs(m.ci_low), Math.abs(m.ci_high), Math.abs(m.delta)) || 1
  const x = (v: number) => Math.round((BAR_W / 2 + (v / reach) * (BAR_W / 2 - 6)) * 100) / 100
  const tone = mark(m).className
  const title = `95% interval ${formatDelta(props.name, m.ci_low)} to ${formatDelta(props.name, m.ci_high)} (${
    m.method === 'newcombe_paired' ? 'Newcombe, paired' : 'paired bootstrap'
  })`
  return (
    <svg
      class={`errorbar ${tone}`}
      viewBox={`0 0 ${BAR_W} ${BAR_H}`}
      width={BAR_W}
      height={BAR_H}
      role='img'
      aria-label={title}
      xmlns='http://www.w3.org/2000/svg'
    >
      <title>{title}</title>
      <line class='zero' x1={BAR_W / 2} x2={BAR_W / 2} y1={1} y2={BAR_H - 1} />
      <line class='bar' x1={x(m.ci_low)} x2={x(m.ci_high)} y1={BAR_H / 2} y2={BAR_H / 2} />
      <line class='bar' x1={x(m.ci_low)} x2={x(m.ci_low)} y1={4} y2={BAR_H - 4} />
      <line class='bar' x1={x(m.ci_high)} x2={x(m.ci_high)} y1={4} y2={BAR_H - 4} />
      <circle class='point' cx={x(m.delta)} cy={BAR_H / 2} r={3} />
    </svg>
  )
}

/** "reported by the policy in 9 of 12 episodes" under a candidate value that came through `_outcome`. */
function Provenance(props: { m: MetricSummary; name: MetricName }) {
  const source = props.m.candidate_source
  if (props.name === 'ood_action_share') return <small class='muted provenance'>measured by replay</small>
  if (!source || props.m.n === 0 || source.reported + source.recorded === 0) return null // not labelled (a blob without outcome_source)
  if (source.reported === 0) return <small class='muted provenance'>{`copied from the baseline (no _outcome) in ${source.recorded} of ${props.m.n}`}</small>
  return <small class='provenance self-reported'>{`reported by the policy in ${source.reported} of ${props.m.n} episodes`}</small>
}

/** The rollup table: one row per metric. */
export function RollupTable(props: { summary: Record<string, unknown> }) {
  return (
    <div class='scroll'>
      <table id='rollup' class='stack'>
        <thead>
          <tr>
            <th>metric</th>
            <th class='num'>baseline</th>
            <th class='num'>candidate</th>
            <th class='num'>delta</th>
            <th>95% interval</th>
            <th class='num'>n</th>
            <th>verdict</th>
          </tr>
        </thead>
        <tbody>
          {METRICS.map((spec) => {
            const m = props.summary[spec.name] as MetricSummary | undefined
            if (!m) return null
            const shown = mark(m)
            const interval = m.ci_low === null || m.ci_high === null || m.ci_low === undefined
              ? NONE
              : `${formatDelta(spec.name, m.ci_low)} … ${formatDelta(spec.name, m.ci_high)}`
            return (
              <tr data-metric={spec.name}>
                <td class='metric head'>
                  {spec.label}
                  <small class='muted'>{`${spec.direction} is better`}</small>
                </td>
                <td class='num' data-label='baseline'>{formatMetric(spec.name, m.baseline)}</td>
                <td class='num candidate-cell' data-label='candidate'>
                  {formatMetric(spec.name, m.candidate)}
                  <Provenance m={m} name={spec.name} />
                </td>
                <td class='num' data-label='delta'>{formatDelta(spec.name, m.delta)}</td>
                <td class='interval' data-label='95% interval'>
                  <ErrorBar m={m} name={spec.name} />
                  <span class='interval-text'>{interval}</span>
                </td>
                <td class='num' data-label='n'>{m.n === undefined ? NONE : String(m.n)}</td>
                <td class={shown.className}>{shown.text}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

/** The verdict, the recommendation it gives, its reasons, and the open-loop caveat. */
export function Verdict(props: { summary: Record<string, unknown> }) {
  const s = props.summary
  const episodes = s.episodes as { total?: number; done?: number; failed?: number; skipped?: number } | undefined
  const verdict = typeof s.verdict === 'string' ? s.verdict : String(s.recommend)
  const reasons = Array.isArray(s.reasons) ? (s.reasons as string[]) : []
  return (
    <div class='recommend card'>
      <span>Verdict</span>
      <strong class={`r-${verdict}`} id='verdict'>{verdict.toUpperCase()}</strong>
      <span>Recommendation</span>
      <strong class={`r-${String(s.recommend)}`} id='recommendation'>{String(s.recommend).toUpperCase()}</strong>
      <span>{`${formatNumber(s.better_count as number)} of ${formatNumber(s.metric_total as number)} comparable metrics improved on the point estimates`}</span>
      {episodes && (
        <span class='muted'>
          {`episodes: ${episodes.done ?? 0} done, ${episodes.failed ?? 0} failed, ${episodes.skipped ?? 0} skipped of ${episodes.total ?? 0}`}
        </span>
      )}
      {typeof s.min_episodes === 'number' && <span class='muted'>{`min_episodes ${s.min_episodes}`}</span>}
      {typeof s.episodes_needed === 'number' && <span class='muted' id='episodes-needed'>{`about ${s.episodes_needed} paired episodes would settle it`}</span>}
      {reasons.length > 0 && (
        <ol class='reasons' id='reasons'>
          {reasons.map((r, i) => <li key={i}>{r}</li>)}
        </ol>
      )}
      <p class='muted open-loop'>
        Replay is open-loop: the candidate never changes what it observes, so outcome values are what the policy reported (or the baseline's); the action
        distance and the out-of-range share are what replay measures.
      </p>
    </div>
  )
}

/** Action divergence: the summary's means, the run's limit, and the mean L2 per action key over the done rows. */
export function ActionDivergence(
  props: { summary: Record<string, unknown>; rows: ReadonlyArray<{ status: string; metrics: Record<string, unknown> | null }> },
) {
  const d = props.summary.action_divergence as
    | { n: number; l2_mean: number | null; l2_normalized_mean: number | null; ood_action_share_mean: number | null; max_ood_action_share: number }
    | undefined
  const perKey = meanByKey(props.rows)
  if (!d && perKey.length === 0) return null
  const over = d && d.ood_action_share_mean !== null && d.ood_action_share_mean > d.max_ood_action_share
  return (
    <div class='card' id='action-divergence'>
      {d && (
        <dl class='fields'>
          <dt>episodes with action metrics</dt>
          <dd>{String(d.n)}</dd>
          <dt>mean action L2</dt>
          <dd>{formatNumber(d.l2_mean)}</dd>
          <dt>mean normalized action L2</dt>
          <dd>{formatNumber(d.l2_normalized_mean)}</dd>
          <dt>mean OOD action share</dt>
          <dd class={over ? 'worse' : ''}>
            {`${formatMetric('ood_action_share', d.ood_action_share_mean)} (limit ${formatMetric('ood_action_share', d.max_ood_action_share)})`}
          </dd>
        </dl>
      )}
      {perKey.length > 0 && (
        <div class='scroll' tabindex={0} role='region' aria-label='mean L2 distance per action key'>
          <table id='action-keys'>
            <thead>
              <tr>
                <th>action key</th>
                <th class='num'>mean L2</th>
                <th class='num'>episodes</th>
              </tr>
            </thead>
            <tbody>
              {perKey.map((k) => (
                <tr data-key={k.key}>
                  <td>
                    <code>{k.key}</code>
                  </td>
                  <td class='num'>{formatNumber(k.mean)}</td>
                  <td class='num'>{String(k.n)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}

/** Mean of each key's `action_l2_by_key` value over the done rows that have it, keys sorted by name. */
export function meanByKey(rows: ReadonlyArray<{ status: string; metrics: Record<string, unknown> | null }>): Array<{ key: string; mean: number; n: number }> {
  const sums = new Map<string, { sum: number; n: number }>()
  for (const row of rows) {
    const byKey = row.status === 'done' ? row.metrics?.action_l2_by_key : undefined
    if (!byKey || typeof byKey !== 'object' || Array.isArray(byKey)) continue
    for (const [key, value] of Object.entries(byKey as Record<string, unknown>)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) continue
      const entry = sums.get(key) ?? { sum: 0, n: 0 }
      entry.sum += value
      entry.n++
      sums.set(key, entry)
    }
  }
  return [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, { sum, n }]) => ({ key, mean: sum / n, n }))
}
