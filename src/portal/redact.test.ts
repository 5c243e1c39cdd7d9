import { describe, expect, it } from 'vitest'
import { redactLocalPaths } from './redact.ts'

describe('redactLocalPaths', () => {
  it('keeps file names, lines and functions of a Python traceback', () => {
    const trace =
      'Traceback (most recent call last):\n  File "/home/ada/work/robots/policy.py", line 12, in act\n    raise ValueError("bad")\nValueError: action shape (7,) != (6,)'
    expect(redactLocalPaths(trace)).toBe(
      'Traceback (most recent call last):\n  File "policy.py", line 12, in act\n    raise ValueError("bad")\nValueError: action shape (7,) != (6,)',
    )
  })

  it('cuts Node stack frames, file URLs, Windows and home paths', () => {
    expect(
      redactLocalPaths(
        'Error: boom\n    at act (/Users/ada/src/policy.mjs:3:9)\n    at file:///srv/ci/build-7/policy.ts:10:2\n    at node:internal/modules/esm:1:1',
      ),
    ).toBe(
      'Error: boom\n    at act (policy.mjs:3:9)\n    at policy.ts:10:2\n    at node:internal/modules/esm:1:1',
    )
    expect(redactLocalPaths('File "C:\\Users\\ada\\proj\\policy.py", line 1')).toBe('File "policy.py", line 1')
    expect(redactLocalPaths('cannot open ~/data/run-3/cfg.yaml')).toBe('cannot open cfg.yaml')
  })

  it('leaves URLs, relative paths, ratios and plain messages alone', () => {
    for (
      const text of [
        'see https://ci.example/builds/7/log',
        'in src/policy.py',
        'ratio 3/4 and 1/2/3',
        'ValueError: action shape (7,) != (6,)',
        'key /joint_states/position missing',
      ]
    ) {
      expect(redactLocalPaths(text), text).toBe(text)
    }
  })
})
