import { decode } from '@msgpack/msgpack'
import { describe, expect, it } from 'vitest'
import { packObservation, unpackReply } from './msgpack-numpy.ts'
import { parseKeyMap, renameKeys } from './key-map.ts'

const bytes = (text: string) => new TextEncoder().encode(text)
/** A msgpack bin 8 holding `text`'s bytes (what Python's msgpack writes for a bytes key). */
const bin = (text: string) => [0xc4, bytes(text).length, ...bytes(text)]

describe('openpi msgpack_numpy', () => {
  it('packs arrays as maps with binary keys, as openpi-client does (b"__ndarray__", b"data", b"dtype", b"shape")', () => {
    const state = { dtype: 'float32' as const, shape: [2, 3], data: Float32Array.of(1, 2, 3, 4, 5, 6), order: 'C' as const }
    const packed = packObservation({ 'observation/state': state, prompt: 'pick' })
    const raw = decode(packed, { mapKeyConverter: (key) => (key instanceof Uint8Array ? `bin:${new TextDecoder().decode(key)}` : (key as string)) }) as Record<
      string,
      Record<string, unknown>
    >
    expect(Object.keys(raw)).toEqual(['observation/state', 'prompt'])
    expect(raw.prompt).toBe('pick')
    const array = raw['observation/state']!
    expect(Object.keys(array)).toEqual(['bin:__ndarray__', 'bin:data', 'bin:dtype', 'bin:shape'])
    expect(array['bin:__ndarray__']).toBe(true)
    expect(array['bin:dtype']).toBe('<f4')
    expect(array['bin:shape']).toEqual([2, 3])
    expect(Array.from(new Float32Array((array['bin:data'] as Uint8Array).slice().buffer))).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('unpacks replies: arrays to NdArrays of their dtype and shape, numpy scalars to numbers, the rest as is', () => {
    const reply = packObservation({
      actions: { dtype: 'float64', shape: [7], data: Float64Array.from({ length: 7 }, (_, i) => i / 2), order: 'C' },
      server_timing: { infer_ms: 1.5 },
    })
    const out = unpackReply(reply) as Record<string, unknown>
    expect(out.actions).toMatchObject({ dtype: 'float64', shape: [7] })
    expect(Array.from((out.actions as { data: Float64Array }).data)).toEqual([0, 0.5, 1, 1.5, 2, 2.5, 3])
    expect(out.server_timing).toEqual({ infer_ms: 1.5 })
    // {b"__npgeneric__": True, b"data": 3, b"dtype": "<i8"} as openpi packs np.int64(3)
    const generic = Uint8Array.of(0x81, 0xa1, 0x6e, 0x83, ...bin('__npgeneric__'), 0xc3, ...bin('data'), 3, ...bin('dtype'), 0xa3, ...bytes('<i8'))
    expect(unpackReply(generic)).toEqual({ n: 3 })
  })
})

describe('key maps', () => {
  it('parses FROM=TO pairs and renames only mapped keys', () => {
    const map = parseKeyMap('/joint_states/position=observation/state, /camera/depth=observation/image', '--obs-map')
    expect(map).toEqual({ '/joint_states/position': 'observation/state', '/camera/depth': 'observation/image' })
    expect(renameKeys({ '/joint_states/position': 1, other: 2 }, map)).toEqual({ 'observation/state': 1, other: 2 })
  })
  it('names the flag and the bad pair', () => {
    expect(() => parseKeyMap('a=b,c', '--action-map')).toThrow('--action-map: "c" is not FROM=TO')
    expect(() => parseKeyMap('a=b,a=c', '--obs-map')).toThrow('"a" is mapped twice')
  })
})
