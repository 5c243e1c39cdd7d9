import { describe, expect, it } from 'vitest'
import { rollup } from '../eval/rollup.ts'
import { divergenceLines, nonfiniteLines, recommendationLine, resumeCommand, shellWord, summaryLines, verdictThresholds } from './replay-output.ts'

describe('resumeCommand', () => {
  it('keeps every flag that drives the policy or the output, quoted for a shell, and drops those that shape a new run', () => {
    const command = resumeCommand('0190a6d2-0000-7000-8000-000000000000', {
      policy: 'ws://gpu:8000',
      'candidate-version': 'v2',
      'baseline-episodes': '@ids.txt',
      'min-episodes': '3',
      'dry-run': false,
      'obs-map': '/joint_states/position=observation/state',
      'action-map': 'actions=/joint_states/position',
      'policy-timeout': '5',
      prompt: "pick up the robot's cup",
      json: true,
      'fail-on-hold': undefined,
      resume: undefined,
    })
    expect(command).toBe(
      'episodic replay run --resume 0190a6d2-0000-7000-8000-000000000000 --policy ws://gpu:8000' +
        ' --obs-map /joint_states/position=observation/state --action-map actions=/joint_states/position --policy-timeout 5' +
        ` --prompt 'pick up the robot'\\''s cup' --json`,
    )
  })

  it('quotes only what a shell would split or expand', () => {
    expect(shellWord('py:lab.policies:v2.act')).toBe('py:lab.policies:v2.act')
    expect(shellWord('/opt/venv/bin/python')).toBe('/opt/venv/bin/python')
    expect(shellWord('a b')).toBe("'a b'")
    expect(shellWord('$HOME')).toBe("'$HOME'")
    expect(shellWord('')).toBe("''")
  })
})

describe('the summary lines', () => {
  const row = (l2: number, normalized: number, ood: number) => ({
    status: 'done' as const,
    metrics: {
      steps: 10,
      action_l2_mean: l2,
      action_l2_normalized_mean: normalized,
      ood_action_share_candidate: ood,
      success_baseline: true,
      success_candidate: true,
    },
  })

  it('print what replay measures of the actions: L2 (raw and normalized) and the OOD share against its limit', () => {
    const summary = rollup([row(0.1, 0.02, 0.1), row(0.25, 0.04, 0)], { maxOodActionShare: 0.25 })
    expect(divergenceLines(summary)).toEqual([
      'action divergence over 2 episodes: mean L2 distance to the recorded actions 0.175 (normalized by the recorded range: 0.03); outside the recorded range in 5% of steps (limit 25%)',
    ])
    // Between the table and the verdict; the recommendation stays last.
    const lines = summaryLines(summary)
    expect(lines.findIndex((l) => l.startsWith('action divergence'))).toBeLessThan(lines.findIndex((l) => l.startsWith('verdict:')))
    expect(lines.at(-1)).toBe(recommendationLine(summary))
  })

  it('print no divergence line when no episode had action metrics', () => {
    expect(divergenceLines(rollup([{ status: 'done', metrics: { success_baseline: true, success_candidate: true } }]))).toEqual([])
  })

  it('say what the majority counted: improvements of the point estimates, not significant ones', () => {
    expect(recommendationLine(rollup([row(0.1, 0.02, 0)]))).toMatch(
      /^recommendation: HOLD \(verdict \w+; \d+ of \d+ comparable metrics improved on the point estimates\)$/,
    )
  })
})

describe('verdictThresholds', () => {
  it("takes --min-episodes and --max-ood-share by the create body's rules, naming the flag otherwise", () => {
    expect(verdictThresholds('12', '.5')).toEqual({ minEpisodes: 12, maxOodActionShare: 0.5 })
    expect(verdictThresholds(undefined, undefined)).toEqual({})
    for (const text of ['0', '10001', '2.5', '', 'ten', '0x10']) {
      expect(() => verdictThresholds(text, undefined), text).toThrow(`--min-episodes must be an integer from 1 to 10000, got "${text}"`)
    }
    for (const text of ['1.5', '-0.1', '', 'NaN', '1e-1']) {
      expect(() => verdictThresholds(undefined, text), text).toThrow(`--max-ood-share must be a number from 0 to 1, got "${text}"`)
    }
  })
})

describe('nonfiniteLines', () => {
  it('warns with the count of steps whose actions held NaN or Infinity, over done rows only', () => {
    const done = (steps: number, nonfinite_steps: number) => ({ status: 'done' as const, metrics: { steps, nonfinite_steps } })
    expect(nonfiniteLines([done(100, 0), done(100, 0)])).toEqual([])
    expect(nonfiniteLines([done(100, 20), done(100, 0), { status: 'failed' as const, metrics: null }])).toEqual([
      'warning: the policy returned non-finite actions (NaN or Infinity) at 20 of 200 steps, in 1 episode; those components are left out of the action metrics',
    ])
  })
})
