/**
 * Resolves a bare package specifier (`lab-policies`, `@lab/policies/v2`) from
 * a working directory the way `import` would: through the package's
 * `exports` with the conditions `import`, `node` and `default`. Node 20 has no
 * API for that (`import.meta.resolve` takes no parent without a flag, and
 * `createRequire().resolve` uses the `require` condition, so it fails on
 * packages that export only `import`); packages without `exports` are left to
 * `createRequire`, whose legacy `main` lookup is what `import` uses too.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const CONDITIONS = new Set(['import', 'node', 'default'])

/** The file URL `import(specifier)` would load from `cwd`; throws when it cannot be resolved. */
export function resolvePackage(specifier: string, cwd: string): string {
  const { name, subpath } = splitSpecifier(specifier)
  for (let dir = resolve(cwd);; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name)
    const manifest = join(root, 'package.json')
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown }
      if (pkg.exports === undefined || pkg.exports === null) break
      const target = exportTarget(pkg.exports, subpath)
      if (target === undefined) throw new Error(`package "${name}" does not export "${subpath}" for import`)
      if (!target.startsWith('./')) throw new Error(`package "${name}" maps "${subpath}" to "${target}", which is not a ./ path`)
      return pathToFileURL(join(root, target)).href
    }
    if (dirname(dir) === dir) break
  }
  return pathToFileURL(createRequire(join(cwd, 'package.json')).resolve(specifier)).href
}

function splitSpecifier(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split('/')
  const length = specifier.startsWith('@') ? 2 : 1
  if (parts.length < length || parts.slice(0, length).some((part) => part === '')) throw new Error(`"${specifier}" is not a package name`)
  const rest = parts.slice(length).join('/')
  return { name: parts.slice(0, length).join('/'), subpath: rest ? `./${rest}` : '.' }
}

/** The target of `subpath` in an `exports` field, with the import conditions applied. */
export function exportTarget(exports: unknown, subpath: string): string | undefined {
  const map = isSubpathMap(exports) ? (exports as Record<string, unknown>) : { '.': exports }
  if (Object.hasOwn(map, subpath)) return conditional(map[subpath], undefined)
  // Patterns ("./features/*": "./src/*.js"): the longest matching prefix wins, as in Node.
  let best: { key: string; match: string } | undefined
  for (const key of Object.keys(map)) {
    const star = key.indexOf('*')
    if (star < 0 || key.indexOf('*', star + 1) >= 0) continue
    const prefix = key.slice(0, star)
    const suffix = key.slice(star + 1)
    if (subpath.length < key.length || !subpath.startsWith(prefix) || !subpath.endsWith(suffix)) continue
    if (!best || prefix.length > best.key.indexOf('*')) best = { key, match: subpath.slice(prefix.length, subpath.length - suffix.length) }
  }
  return best && conditional(map[best.key], best.match)
}

function isSubpathMap(exports: unknown): boolean {
  if (typeof exports !== 'object' || exports === null || Array.isArray(exports)) return false
  return Object.keys(exports).some((key) => key.startsWith('.'))
}

/** Applies conditions (object keys in order), arrays (first that resolves) and `*` substitution. */
function conditional(target: unknown, match: string | undefined): string | undefined {
  if (typeof target === 'string') return match === undefined ? target : target.replaceAll('*', match)
  if (Array.isArray(target)) {
    for (const item of target) {
      const found = conditional(item, match)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof target === 'object' && target !== null) {
    for (const [condition, value] of Object.entries(target)) {
      if (!CONDITIONS.has(condition)) continue
      const found = conditional(value, match)
      if (found !== undefined) return found
    }
  }
  return undefined
}
