/**
 * The package's entry points are written down in five places that must agree:
 * package.json `exports` (npm, built files), jsr.json and deno.json `exports`
 * (JSR, sources), tsup.config.ts (which source builds which file), and the
 * `episodic/*` self-imports that let the examples run from source
 * (deno.json `imports`, tsconfig.json `paths`).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ENTRIES } from '../../tsup.config.ts'
import { ROOT } from './harness.ts'

const json = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'))
const pkg = json('package.json')
const jsr = json('jsr.json')
const deno = json('deno.json')
const tsconfig = json('tsconfig.json')

const SUBPATHS = ['.', './client', './replay', './node', './deno', './bun', './workers']
/** `.` -> `index`, `./node` -> `node`: the dist file name of a subpath. */
const distName = (subpath: string) => (subpath === '.' ? 'index' : subpath.slice(2))
/** `.` -> `episodic`, `./node` -> `episodic/node`: the specifier users write. */
const specifier = (subpath: string) => (subpath === '.' ? 'episodic' : `episodic/${subpath.slice(2)}`)

describe('package entry points agree', () => {
  it('package.json, jsr.json and deno.json export the same subpaths', () => {
    expect(Object.keys(pkg.exports)).toEqual(SUBPATHS)
    expect(Object.keys(jsr.exports)).toEqual(SUBPATHS)
    expect(deno.exports).toEqual(jsr.exports)
  })

  it('each npm export is the tsup build of the source JSR exports', () => {
    expect(Object.keys(ENTRIES).sort()).toEqual(SUBPATHS.map(distName).sort())
    for (const subpath of SUBPATHS) {
      const name = distName(subpath)
      expect(pkg.exports[subpath]).toEqual({ types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` })
      expect(jsr.exports[subpath]).toBe(`./${ENTRIES[name]}`)
    }
    expect(pkg.main).toBe(pkg.exports['.'].default)
    expect(pkg.types).toBe(pkg.exports['.'].types)
    expect(pkg.bin).toEqual({ episodic: './dist/cli.js' })
    expect(pkg.files).toContain('dist')
  })

  it('the episodic/* self-imports of the examples point at the same sources', () => {
    for (const subpath of SUBPATHS) {
      expect(deno.imports[specifier(subpath)]).toBe(jsr.exports[subpath])
      expect(tsconfig.compilerOptions.paths[specifier(subpath)]).toEqual([jsr.exports[subpath]])
    }
    expect(Object.keys(deno.imports).filter((s) => s.startsWith('episodic')).length).toBe(SUBPATHS.length)
  })

  it('names, versions, licenses and publish lists match', () => {
    expect(jsr.name).toBe('@episodic/episodic')
    expect(deno.name).toBe(jsr.name)
    expect(jsr.version).toBe(pkg.version)
    expect(deno.version).toBe(pkg.version)
    expect(jsr.license).toBe(pkg.license)
    expect(deno.license).toBe(pkg.license)
    expect(deno.publish).toEqual(jsr.publish)
  })
})
