import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadPolicy } from './policy.ts'
import { exportTarget, resolvePackage } from './resolve-package.ts'

let dir: string

/** Writes files under dir/node_modules/<name>: a package.json and the given sources. */
function pkg(name: string, manifest: object, files: Record<string, string>, under = dir) {
  const root = join(under, 'node_modules', name)
  mkdirSync(root, { recursive: true })
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name, ...manifest }))
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true })
    writeFileSync(join(root, file), text)
  }
}

const url = (...parts: string[]) => pathToFileURL(join(dir, 'node_modules', ...parts)).href
const POLICY = (tag: string) => `export const act = () => ({ tag: '${tag}' })\nexport default { act }\n`

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'episodic-resolve-'))
  pkg('esm-only', { type: 'module', exports: { '.': { import: './index.js' } } }, { 'index.js': POLICY('esm-only') })
  pkg('dual', { exports: { '.': { require: './index.cjs', import: './index.mjs' } } }, {
    'index.cjs': 'exports.act = () => ({ tag: "cjs" })\n',
    'index.mjs': POLICY('esm'),
  })
  pkg('nested', { exports: { node: { import: './node.mjs' }, default: './default.mjs' } }, { 'node.mjs': POLICY('node'), 'default.mjs': POLICY('default') })
  pkg('@lab/policies', { type: 'module', exports: { '.': './index.js', './policies/*': { import: './src/*.js' }, './internal/*': null } }, {
    'index.js': POLICY('scoped'),
    'src/v2.js': POLICY('v2'),
  })
  pkg('legacy', { main: 'lib/main.js' }, { 'lib/main.js': 'exports.act = () => ({ tag: "legacy" })\n' })
  mkdirSync(join(dir, 'project', 'deep'), { recursive: true })
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('resolvePackage', () => {
  it('resolves a package that exports only an import condition (createRequire cannot)', () => {
    expect(resolvePackage('esm-only', dir)).toBe(url('esm-only', 'index.js'))
  })

  it('prefers the import condition of a dual package, as import does', () => {
    expect(resolvePackage('dual', dir)).toBe(url('dual', 'index.mjs'))
  })

  it('takes conditions in the order the package lists them, nested too', () => {
    expect(resolvePackage('nested', dir)).toBe(url('nested', 'node.mjs'))
  })

  it('resolves scoped names, subpath patterns, and refuses what is not exported', () => {
    expect(resolvePackage('@lab/policies', dir)).toBe(url('@lab', 'policies', 'index.js'))
    expect(resolvePackage('@lab/policies/policies/v2', dir)).toBe(url('@lab', 'policies', 'src', 'v2.js'))
    expect(() => resolvePackage('@lab/policies/internal/x', dir)).toThrow('does not export "./internal/x"')
    expect(() => resolvePackage('@lab/policies/other', dir)).toThrow('does not export "./other"')
  })

  it('finds packages in a parent directory, as Node does', () => {
    expect(resolvePackage('esm-only', join(dir, 'project', 'deep'))).toBe(url('esm-only', 'index.js'))
  })

  it('leaves packages without exports to the legacy main lookup', () => {
    expect(resolvePackage('legacy', dir)).toBe(url('legacy', 'lib', 'main.js'))
  })

  it('throws MODULE_NOT_FOUND for a package that is not installed', () => {
    expect(() => resolvePackage('not-installed', dir)).toThrow(expect.objectContaining({ code: 'MODULE_NOT_FOUND' }))
  })
})

describe('exportTarget', () => {
  it('reads the sugar forms of exports', () => {
    expect(exportTarget('./main.js', '.')).toBe('./main.js')
    expect(exportTarget({ import: './a.mjs', require: './a.cjs' }, '.')).toBe('./a.mjs')
    expect(exportTarget(['./first.js', './second.js'], '.')).toBe('./first.js')
    expect(exportTarget([{ require: './r.cjs' }, './fallback.js'], '.')).toBe('./fallback.js')
  })

  it('picks the longest matching pattern and needs a non-empty match', () => {
    const exports = { './a/*': './short/*.js', './a/b/*': './long/*.js' }
    expect(exportTarget(exports, './a/b/c')).toBe('./long/c.js')
    expect(exportTarget(exports, './a/x')).toBe('./short/x.js')
    expect(exportTarget(exports, './a/')).toBeUndefined()
  })
})

describe('loadPolicy with packages', () => {
  it('imports the policy function a package exports for import', async () => {
    for (
      const [spec, tag] of [
        ['esm-only:act', 'esm-only'],
        ['dual:act', 'esm'],
        ['nested:default.act', 'node'],
        ['@lab/policies/policies/v2:act', 'v2'],
        ['legacy:act', 'legacy'],
      ] as const
    ) {
      const policy = await loadPolicy(spec, dir)
      expect(policy.act({}, { step: 0, steps: 1, episodeIndex: 0, baselineEpisodeId: 'b' }) as unknown, spec).toEqual({ tag })
    }
  })

  it('says which package is missing and where it looked', async () => {
    await expect(loadPolicy('not-installed:act', dir)).rejects.toThrow(`policy package "not-installed" cannot be resolved from ${dir} (is it installed?)`)
    await expect(loadPolicy('@lab/policies/other:act', dir)).rejects.toThrow('does not export "./other"')
  })

  it('points at py: when the spec names a Python module in the working directory', async () => {
    mkdirSync(join(dir, 'lab'), { recursive: true })
    writeFileSync(join(dir, 'lab', 'pypolicies.py'), 'def act(obs):\n    return {}\n')
    await expect(loadPolicy('lab.pypolicies:v2.act', dir)).rejects.toThrow(
      `policy package "lab.pypolicies" cannot be resolved from ${dir} (is it installed?); for the Python module, use --policy py:lab.pypolicies:v2.act`,
    )
    await expect(loadPolicy('not-installed:act', dir)).rejects.not.toThrow('py:')
  })
})
