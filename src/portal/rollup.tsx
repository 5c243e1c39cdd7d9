/** @jsxImportSource hono/jsx */
/**
 * The rollup part of the eval-run page: the recommendation and the metric
 * table, read from the summary the server stored at finalize (the rule that
 * made it lives in src/eval/rollup.ts; these only show it).
 */
import { METRICS, type MetricSummary } from '../eval/rollup.ts'
import { formatDelta, formatMetric, formatNumber, NONE, verdict } from './format.ts'

/** The run's recommendation as a badge, or a dash while it has none. */
export function Recommend(props: { summary: Record<string, unknown> | null }) {
  const recommend = props.summary?.recommend
  if (recommend !== 'ship' && recommend !== 'hold') return <span class="muted">{NONE}</span>
  return <span class={`badge r-${recommend}`}>{recommend}</span>
}

/** The rollup: baseline, candidate, delta and a better/worse mark per metric. */
export function RollupTable(props: { summary: Record<string, unknown> }) {
  return (
    <div class="scroll">
      <table id="rollup" class="stack">
        <thead>
          <tr><th>metric</th><th class="num">baseline</th><th class="num">candidate</th><th class="num">delta</th><th>verdict</th></tr>
        </thead>
        <tbody>
          {METRICS.map((spec) => {
            const m = props.summary[spec.name] as MetricSummary | undefined
            if (!m) return null
            const mark = verdict(m)
            return (
              <tr data-metric={spec.name}>
                <td class="metric head">{spec.label}<small class="muted">{`${spec.direction} is better`}</small></td>
                <td class="num" data-label="baseline">{formatMetric(spec.name, m.baseline)}</td>
                <td class="num" data-label="candidate">{formatMetric(spec.name, m.candidate)}</td>
                <td class="num" data-label="delta">{formatDelta(spec.name, m.delta)}</td>
                <td class={mark.className}>{mark.text}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

/** The recommendation with its counts (and, on hold, why). */
export function Verdict(props: { summary: Record<string, unknown> }) {
  const s = props.summary
  const episodes = s.episodes as { total?: number; done?: number; failed?: number; skipped?: number } | undefined
  return (
    <div class="recommend card">
      <span>Recommendation</span>
      <strong class={`r-${String(s.recommend)}`} id="recommendation">{String(s.recommend).toUpperCase()}</strong>
      <span>{`${formatNumber(s.better_count as number)} of ${formatNumber(s.metric_total as number)} comparable metrics better`}</span>
      {episodes && <span class="muted">{`episodes: ${episodes.done ?? 0} done, ${episodes.failed ?? 0} failed, ${episodes.skipped ?? 0} skipped of ${episodes.total ?? 0}`}</span>}
      {s.recommend === 'hold' && <span class="muted" id="hold-reasons">{`held: ${holdReasons(s).join('; ')}`}</span>}
    </div>
  )
}

/**
 * Why the server said hold, in words, read off the summary (the rule is the
 * contract's, applied in src/eval/rollup.ts; this only explains it).
 */
function holdReasons(s: Record<string, unknown>): string[] {
  const worse = (name: string) => {
    const m = s[name] as MetricSummary | undefined
    return m?.delta_is_better === false && m.delta !== 0
  }
  const failed = (s.episodes as { failed?: number } | undefined)?.failed ?? 0
  const total = Number(s.metric_total)
  const reasons: string[] = []
  if (failed > 0) reasons.push(`${failed} episode${failed === 1 ? '' : 's'} failed`)
  if (worse('success_rate')) reasons.push('success rate got worse')
  if (worse('collision_rate')) reasons.push('collision rate got worse')
  if (total === 0) reasons.push('no metric could be compared')
  else if (3 * Number(s.better_count) < 2 * total) reasons.push('fewer than two thirds of the metrics improved')
  return reasons.length ? reasons : ['see the rollup']
}
