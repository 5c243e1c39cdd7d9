import { describe, expect, it } from 'vitest'
import { parseKeyMap, renameKeys } from './key-map.ts'

describe('key maps', () => {
  it('parses FROM=TO pairs and refuses a key mapped twice or two keys mapped onto one name', () => {
    expect(parseKeyMap(' /a=x , /b=y,', '--obs-map')).toEqual({ '/a': 'x', '/b': 'y' })
    expect(() => parseKeyMap('/a=x,/a=y', '--obs-map')).toThrow('--obs-map: "/a" is mapped twice')
    expect(() => parseKeyMap('/a=x,/b=x', '--obs-map')).toThrow('--obs-map: "/a" and "/b" are both mapped to "x"; one would overwrite the other')
    expect(() => parseKeyMap('/a', '--action-map')).toThrow('--action-map: "/a" is not FROM=TO')
  })

  it('renames keys, and refuses to let a renamed key replace one the record keeps, in either order', () => {
    expect(renameKeys({ '/a': 1, '/b': 2 }, { '/a': 'x' })).toEqual({ x: 1, '/b': 2 })
    expect(() => renameKeys({ '/a': 1, '/b': 2 }, { '/a': '/b' })).toThrow('the key map gives "/a" and "/b" the same name "/b"')
    expect(() => renameKeys({ prompt: 'hi', '/a': 1 }, { '/a': 'prompt' })).toThrow('the key map gives "prompt" and "/a" the same name "prompt"')
    // Swapping two names is fine.
    expect(renameKeys({ '/a': 1, '/b': 2 }, { '/a': '/b', '/b': '/a' })).toEqual({ '/b': 1, '/a': 2 })
  })
})
