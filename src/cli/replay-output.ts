/** The lines `episodic replay run` prints (spec, "Command line"). */
import type { RollupSummary } from '../eval/rollup.ts'
import { METRICS } from '../eval/rollup.ts'
import type { EpisodeResult, EvalRunHandle } from '../replay/run.ts'

export function headerLine(run: EvalRunHandle): string {
  const n = run.baselineEpisodeIds.length
  return `replay run: candidate ${run.candidatePolicyVersion} vs baseline ${run.baselinePolicyVersion ?? '(unspecified)'}, ${n} episode${n === 1 ? '' : 's'}${run.dryRun ? ' (dry run: no uploads)' : ''}`
}

export function runLine(run: EvalRunHandle): string {
  return run.id ? `eval run ${run.id}  ${run.portalUrl}` : 'eval run: none (dry run)'
}

export function episodeLine(result: EpisodeResult, dryRun: boolean): string {
  const prefix = `[${result.index}/${result.total}] ${result.baselineEpisodeId} ->`
  if (result.status === 'failed') return `${prefix} failed: ${firstLine(result.error)}`
  return `${prefix} ${result.replayEpisodeId ? result.replayEpisodeId.slice(0, 8) : dryRun ? '(dry run)' : '?'}`
}

const num = (x: number | null, signed = false) => (x === null ? '-' : `${signed && x > 0 ? '+' : ''}${Number(x.toFixed(3))}`)

export function metricLines(summary: RollupSummary): string[] {
  const rows = METRICS.map((m) => {
    const s = summary[m.name]
    const mark = s.delta_is_better === null ? '' : s.delta_is_better ? 'better' : s.delta === 0 ? 'same' : 'worse'
    return [m.name, num(s.baseline), num(s.candidate), num(s.delta, true), mark]
  })
  const header = ['metric', 'baseline', 'candidate', 'delta', '']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd())
}

export function recommendationLine(summary: RollupSummary): string {
  const detail = `${summary.better_count} of ${summary.metric_total} comparable metrics better`
  return summary.recommend === 'ship' ? `recommendation: SHIP (${detail})` : `recommendation: HOLD (${detail}; ship needs 2/3 better, success and collisions not worse, no failed episode)`
}

function firstLine(text: string | null): string {
  const line = (text ?? '').split('\n')[0] ?? ''
  return line.length > 160 ? `${line.slice(0, 157)}...` : line
}
