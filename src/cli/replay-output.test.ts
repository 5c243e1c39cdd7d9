import { describe, expect, it } from 'vitest'
import { resumeCommand, shellWord } from './replay-output.ts'

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
