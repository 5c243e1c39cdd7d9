import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createZlibInflate, type DType, type NdArray, type NdArrayLike, readNpz, type TypedArray, writeNpz } from '../src/replay/npz/index.ts'
import { describeWithNumpy, runPython } from './helpers/python.ts'

/**
 * Python side of the numpy -> readNpz direction: writes archives with np.savez and
 * np.savez_compressed, plus each array's expected C-order little-endian bytes
 * (float16 widened to float32, as the reader does) and a manifest.
 */
const GENERATE = String.raw`
import json, sys, io, zipfile, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(7)
arrays = {}
def sample(code, shape):
    dt = np.dtype(code)
    n = int(np.prod(shape))
    if dt.kind == 'b':
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dt.kind in 'iu':
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        v[:2] = [info.min, info.max]
        return v.reshape(shape)
    info = np.finfo(dt)
    v = (rng.standard_normal(n) * 1000).astype(dt)
    v[:6] = [np.nan, np.inf, -np.inf, -0.0, info.tiny, info.max]
    v[6] = info.smallest_subnormal
    return v.reshape(shape)
for code in ['b1', 'i1', 'u1', 'i2', 'u2', 'i4', 'u4', 'i8', 'u8', 'f2', 'f4', 'f8']:
    base = sample(code, (3, 4, 5))
    for order in ['<', '>']:
        if np.dtype(code).itemsize == 1 and order == '>':
            continue
        a = base.astype(base.dtype.newbyteorder(order))
        arrays['/dtype/%s%s/C' % (order, code)] = a
        arrays['/dtype/%s%s/F' % (order, code)] = np.asfortranarray(a)
        arrays['/dtype/%s%s/F2d' % (order, code)] = np.asfortranarray(a.reshape(6, 10))
        arrays['/dtype/%s%s/0d' % (order, code)] = a.reshape(-1)[7].copy().reshape(())
arrays['/joint_states/position'] = rng.standard_normal((300, 7))
arrays['/empty'] = np.zeros((0, 7), dtype=np.float32)
arrays['plain_key'] = np.arange(5, dtype=np.int16)
arrays['/camera/depth'] = (np.cumsum(rng.standard_normal((40, 64, 64)), axis=2) * 100).astype(np.float32)
arrays['/big/random_walk'] = np.cumsum(rng.standard_normal(1 << 20))
manifest = []
for i, (key, a) in enumerate(arrays.items()):
    expected = a.astype('<f4') if a.dtype.kind == 'f' and a.dtype.itemsize == 2 else a.astype(a.dtype.newbyteorder('<'))
    open('%s/%d.bin' % (out, i), 'wb').write(np.ascontiguousarray(expected).tobytes())
    order = 'F' if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous else 'C'
    manifest.append({'key': key, 'dtype': a.dtype.name, 'shape': list(a.shape), 'order': order, 'bin': '%d.bin' % i})
np.savez(out + '/stored.npz', **arrays)
np.savez_compressed(out + '/deflated.npz', **arrays)
# 70,000 members: more than the 65,535 a plain zip directory can count, so Python writes zip64 end records
buf = io.BytesIO(); np.save(buf, np.arange(3, dtype='<u2')); member = buf.getvalue()
with zipfile.ZipFile(out + '/many.npz', 'w') as z:
    for i in range(70000):
        z.writestr('/m/%d.npy' % i, member)
json.dump(manifest, open(out + '/manifest.json', 'w'))
`

/** Python side of the writeNpz -> numpy direction: checks every key, dtype, shape and value. */
const VERIFY = String.raw`
import json, sys, numpy as np
out = sys.argv[1]
manifest = json.load(open(out + '/written.json'))
for name in ['written-stored.npz', 'written-deflated.npz', 'written-zip64.npz']:
    with np.load(out + '/' + name) as f:
        assert sorted(f.files) == sorted(m['key'] for m in manifest), (name, f.files)
        for m in manifest:
            a = f[m['key']]
            assert a.dtype == np.dtype(m['dtype']), (name, m['key'], a.dtype, m['dtype'])
            assert list(a.shape) == m['shape'], (name, m['key'], a.shape)
            expected = open(out + '/' + m['bin'], 'rb').read()
            got = a.astype('<f4') if m['dtype'] == 'float16' else a.astype(a.dtype.newbyteorder('<'))
            assert np.ascontiguousarray(got).tobytes() == expected, (name, m['key'], a)
print('OK')
`

interface ManifestEntry {
  key: string
  dtype: DType
  shape: number[]
  order: 'C' | 'F'
  bin: string
}

const bytesOf = (data: TypedArray): Uint8Array => new Uint8Array(data.buffer, data.byteOffset, data.byteLength)

describeWithNumpy('npz compatibility with numpy', () => {
  let dir: string
  let manifest: ManifestEntry[]

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'episodic-npz-'))
    runPython(GENERATE, [dir])
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  for (const [file, inPlace] of [['stored', false], ['stored', true], ['deflated', false], ['deflated', true]] as const) {
    const how = inPlace ? ', in place' : ''
    it(`reads np.${file === 'stored' ? 'savez' : 'savez_compressed'} archives exactly (every dtype, both byte orders, C and F, 0-d${how})`, () => {
      const input = readFileSync(join(dir, `${file}.npz`))
      const arrays = readNpz(input, { verifyCrc: true, inPlace })
      // in place, native-order stored members are views of the input (no copy); otherwise never
      const views = manifest.filter((m) => arrays[m.key].data.buffer === input.buffer).length
      if (inPlace && file === 'stored') expect(views).toBeGreaterThan(manifest.length / 3)
      else expect(views).toBe(0)
      expect(Object.keys(arrays)).toEqual(manifest.map((m) => m.key))
      expect(manifest.length).toBeGreaterThan(80)
      for (const m of manifest) {
        const a = arrays[m.key]
        expect({ key: m.key, dtype: a.dtype, shape: a.shape, order: a.order }).toEqual({ key: m.key, dtype: m.dtype, shape: m.shape, order: m.order })
        const expected = readFileSync(join(dir, m.bin))
        expect(Buffer.from(bytesOf(a.data)).equals(expected), `values of ${m.key}`).toBe(true)
      }
    })
  }

  it('node:zlib and fflate inflaters decode the deflated archive identically', () => {
    const bytes = readFileSync(join(dir, 'deflated.npz'))
    const viaZlib = readNpz(bytes, { inflate: createZlibInflate(zlib.inflateRawSync) })
    const viaFflate = readNpz(bytes)
    for (const m of manifest) expect(Buffer.from(bytesOf(viaZlib[m.key].data)).equals(Buffer.from(bytesOf(viaFflate[m.key].data)))).toBe(true)
  })

  it('reads a Python zip64 archive with 70,000 members', () => {
    const arrays = readNpz(readFileSync(join(dir, 'many.npz')))
    expect(Object.keys(arrays)).toHaveLength(70000)
    expect(arrays['/m/69999']).toEqual({ dtype: 'uint16', shape: [3], data: new Uint16Array([0, 1, 2]), order: 'C' })
  })

  it('writes archives numpy loads back identically (stored, deflated, zip64)', () => {
    const written: Record<string, NdArrayLike> = {}
    const entries: ManifestEntry[] = []
    // Reuse numpy's own sample arrays: every dtype, 0-d, empty, slash keys, a large deflated array.
    const source = readNpz(readFileSync(join(dir, 'stored.npz')))
    manifest.forEach((m, i) => {
      const key = `/w${m.key}`
      const a: NdArray = source[m.key]
      written[key] = { dtype: a.dtype, shape: a.shape, data: a.data }
      writeFileSync(join(dir, `w${i}.bin`), bytesOf(a.data))
      entries.push({ ...m, key, bin: `w${i}.bin` })
    })
    writeFileSync(join(dir, 'written.json'), JSON.stringify(entries))
    writeFileSync(join(dir, 'written-stored.npz'), writeNpz(written))
    writeFileSync(join(dir, 'written-deflated.npz'), writeNpz(written, { compress: true }))
    writeFileSync(join(dir, 'written-zip64.npz'), writeNpz(written, { zip64: true }))
    expect(runPython(VERIFY, [dir]).trim()).toBe('OK')
  })
})
