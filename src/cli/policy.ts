/**
 * Loads `--policy MODULE:FN`: MODULE is a file (`./policy.mjs`, `lib/p.ts`)
 * or a package name resolved from the working directory; FN is an attribute
 * path that may be dotted (`policies.v2.act`). TypeScript files load through
 * tsx's loader, so a `.ts` policy works without a build step.
 */
import { existsSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Policy } from '../replay/episode.ts'
import { configError, usageError } from './exit.ts'
import { resolvePackage } from './resolve-package.ts'

const FILE_RE = /\.(?:[cm]?js|[cm]?ts|tsx)$/

/** Splits and resolves `MODULE:FN` against `cwd`, imports it and returns the function. */
export async function loadPolicy(spec: string, cwd: string): Promise<Policy> {
  const colon = spec.lastIndexOf(':')
  if (colon <= 0 || colon === spec.length - 1) throw usageError(`--policy must be MODULE:FN (got "${spec}")`)
  const moduleName = spec.slice(0, colon)
  const attribute = spec.slice(colon + 1)
  const url = resolveModule(moduleName, cwd)
  if (/\.(?:[cm]?ts|tsx)$/.test(url)) await registerTypeScript()
  let mod: Record<string, unknown>
  try {
    mod = (await import(url)) as Record<string, unknown>
  } catch (error) {
    throw configError(`cannot import policy module ${moduleName}: ${(error as Error).message}`)
  }
  let value: unknown = mod
  for (const part of attribute.split('.')) {
    const holder = value as Record<string, unknown> | undefined
    value = holder?.[part] ?? (holder === mod ? (mod.default as Record<string, unknown> | undefined)?.[part] : undefined)
    if (value === undefined) throw configError(`policy module ${moduleName} has no attribute "${attribute}" (missing "${part}")`)
  }
  if (typeof value !== 'function') throw configError(`${moduleName}:${attribute} is a ${typeof value}, not a function`)
  return value as Policy
}

function resolveModule(name: string, cwd: string): string {
  const looksLikePath = name.startsWith('.') || isAbsolute(name) || FILE_RE.test(name)
  if (looksLikePath) {
    const file = resolve(cwd, name)
    if (!existsSync(file)) throw configError(`policy module not found: ${file}`)
    return pathToFileURL(file).href
  }
  try {
    return resolvePackage(name, cwd)
  } catch (error) {
    const code = (error as { code?: string }).code
    const why = code === 'MODULE_NOT_FOUND' ? 'is it installed?' : (error as Error).message
    throw configError(`policy package "${name}" cannot be resolved from ${cwd} (${why})`)
  }
}

let tsRegistered = false

async function registerTypeScript(): Promise<void> {
  if (tsRegistered || process.execArgv.some((a) => a.includes('tsx'))) return
  try {
    const { register } = await import('tsx/esm/api')
    register()
    tsRegistered = true
  } catch (error) {
    throw configError(`loading a TypeScript policy needs the tsx package (${(error as Error).message}); or compile it to .js`)
  }
}
