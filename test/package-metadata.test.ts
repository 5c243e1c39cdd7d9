/**
 * What npm and JSR users see of the package besides its code: license,
 * links, no install-time dependency on tsx, no source maps pointing at files
 * that are not shipped, and the CLI kept out of the JSR package.
 */
import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { main } from '../src/cli/main.ts'
import { VERSION } from '../src/version.ts'

const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
const jsr = JSON.parse(readFileSync('jsr.json', 'utf8'))
const deno = JSON.parse(readFileSync('deno.json', 'utf8'))

describe('package metadata', () => {
  it('ships the Apache-2.0 license it declares, in both packages', () => {
    expect(pkg.license).toBe('Apache-2.0')
    expect(readFileSync('LICENSE', 'utf8')).toContain('Apache License\n                           Version 2.0')
    expect(pkg.files).toContain('LICENSE')
    for (const config of [jsr, deno]) {
      expect(config.license).toBe('Apache-2.0')
      expect(config.publish.include).toContain('LICENSE')
    }
  })

  it('has the fields registries and bundlers read', () => {
    for (const field of ['repository', 'homepage', 'bugs', 'keywords', 'sideEffects']) expect(pkg, field).toHaveProperty(field)
    expect(pkg.bin).toEqual({ episodic: './dist/cli.js' })
    expect(existsSync('src/cli/main.ts')).toBe(true)
    expect(pkg.version).toBe(jsr.version)
    expect(deno.version).toBe(jsr.version)
    expect(VERSION).toBe(pkg.version)
  })

  it('installs no TypeScript loader for library users: tsx is an optional peer', () => {
    expect(pkg.dependencies).not.toHaveProperty('tsx')
    expect(pkg.peerDependencies.tsx).toBeDefined()
    expect(pkg.peerDependenciesMeta.tsx.optional).toBe(true)
    expect(readFileSync('tsup.config.ts', 'utf8')).toMatch(/sourcemap: false/)
  })

  it('keeps the CLI out of the JSR package (it is unreachable from the exports)', () => {
    for (const config of [jsr, deno]) expect(config.publish.exclude).toContain('src/cli/**')
  })

  it('answers episodic --version and -V with the package version', async () => {
    let out = ''
    const io = { env: {}, cwd: process.cwd(), stdout: (text: string) => (out += text), stderr: () => {} }
    expect(await main(['--version'], io)).toBe(0)
    expect(await main(['-V'], io)).toBe(0)
    expect(out).toBe(`${pkg.version}\n${pkg.version}\n`)
  })
})
