/**
 * Loads `--policy`:
 * - `MODULE:FN`: MODULE is a file (`./policy.mjs`, `lib/p.ts`) or a package
 *   name resolved from the working directory; FN is an attribute path that
 *   may be dotted (`policies.v2.act`). TypeScript files load through tsx's
 *   loader, so a `.ts` policy works without a build step. A `reset` function
 *   beside FN (a module export for a top-level FN, `policies.v2.reset` for
 *   `policies.v2.act`) runs before each episode.
 * - `py:package.module:attr` or `path/file.py:attr`: a Python callable, run
 *   by the Python bridge (`pythonPolicy`).
 * - `ws://host:port` (or `wss://`): an openpi-protocol policy server
 *   (`websocketPolicy`).
 */
import { existsSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { EpisodeContext, PolicyObject } from '../replay/policy.ts'
import { pythonPolicy } from '../replay/python/policy.ts'
import { timedPolicy } from '../replay/timed-policy.ts'
import { parseKeyMap } from '../replay/websocket/key-map.ts'
import type { WebSocketConstructor } from '../replay/websocket/policy.ts'
import { CliError, configError, usageError } from './exit.ts'
import { err } from './io.ts'
import { resolvePackage } from './resolve-package.ts'

const FILE_RE = /\.(?:[cm]?js|[cm]?ts|tsx)$/

export interface LoadPolicyOptions {
  /** `--python`: the interpreter for Python policies (default `python3` on PATH). */
  python?: string
  /** `--obs-map` / `--action-map` text (`from=to,...`), for policy servers. */
  obsMap?: string
  actionMap?: string
  /** `--action-horizon`: the policy server answers with chunks of this many steps. */
  actionHorizon?: number
  /** `--policy-timeout` in milliseconds: a policy that takes longer over a step fails the episode (a JavaScript one: its promise). */
  timeoutMs?: number
  /** `--prompt`: sent as `prompt` with each observation (the fallback for `promptField`). */
  prompt?: string
  /** `--prompt-field`: the baseline metadata field whose text is each episode's prompt. */
  promptField?: string
  /** `EPISODIC_POLICY_API_KEY`: sent to a policy server as openpi's `Authorization: Api-Key <key>`. */
  policyApiKey?: string
}

/** Resolves `--policy` against `cwd` and returns a policy object (its `close` ends a Python process or a connection). */
export async function loadPolicy(spec: string, cwd: string, options: LoadPolicyOptions = {}): Promise<PolicyObject> {
  const serverOnly = {
    '--obs-map': options.obsMap,
    '--action-map': options.actionMap,
    '--action-horizon': options.actionHorizon,
    '--prompt': options.prompt,
    '--prompt-field': options.promptField,
  }
  const server = /^wss?:\/\//i.test(spec)
  if (/^https?:\/\//i.test(spec)) {
    throw usageError(`--policy ${spec}: a policy server's address starts with ws:// or wss:// (openpi's websocket protocol)`, 'replay')
  }
  const given = Object.entries(serverOnly).filter(([, value]) => value !== undefined).map(([flag]) => flag)
  if (given.length && !server) throw usageError(`${given.join(', ')}: only for a policy server (--policy ws://host:port)`, 'replay')
  if (server) {
    // Loaded for a policy server only: `ws` alone costs every other replay ~0.05 s at start.
    const [{ default: WebSocket }, { websocketPolicy }] = await Promise.all([import('ws'), import('../replay/websocket/policy.ts')])
    try {
      const observationKeys = options.obsMap ? parseKeyMap(options.obsMap, '--obs-map') : undefined
      const actionKeys = options.actionMap ? parseKeyMap(options.actionMap, '--action-map') : undefined
      return websocketPolicy({
        url: spec,
        observationKeys,
        actionKeys,
        actionHorizon: options.actionHorizon,
        timeoutMs: options.timeoutMs,
        prompt: promptOf(options),
        headers: options.policyApiKey ? { Authorization: `Api-Key ${options.policyApiKey}` } : undefined,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
        onWarning: (text) => err(`warning: ${text.replace('the observation key map', '--obs-map')}`),
      })
    } catch (error) {
      throw usageError((error as Error).message, 'replay')
    }
  }
  const python = spec.startsWith('py:') ? spec.slice(3) : /^[^:]+\.py:[^:]+$/.test(spec) ? spec : null
  if (python !== null) {
    if (!/^[^:]+:[^:]+$/.test(python)) throw usageError(`--policy py:MODULE:ATTR needs both parts (got "${spec}")`, 'replay')
    if (python.split(':')[0]!.endsWith('.py') && !existsSync(resolve(cwd, python.split(':')[0]!))) {
      throw configError(`policy module not found: ${resolve(cwd, python.split(':')[0]!)}`)
    }
    return pythonPolicy({ module: python, python: options.python, cwd, timeoutMs: options.timeoutMs })
  }
  if (options.python) throw usageError('--python applies to a Python policy (--policy py:package.module:attr or file.py:attr)', 'replay')
  const policy = await loadJavaScriptPolicy(spec, cwd)
  // On the CLI's own thread only a step's promise can be given up on (a synchronous step that never returns cannot).
  return options.timeoutMs === undefined ? policy : timedPolicy(policy, options.timeoutMs)
}

async function loadJavaScriptPolicy(spec: string, cwd: string): Promise<PolicyObject> {
  const colon = spec.lastIndexOf(':')
  if (colon <= 0 || colon === spec.length - 1) throw usageError(`--policy must be MODULE:FN (got "${spec}")`, 'replay')
  const moduleName = spec.slice(0, colon)
  const attribute = spec.slice(colon + 1)
  let url: string
  try {
    url = resolveModule(moduleName, cwd)
  } catch (error) {
    // The spec's `package.module:attr` reads like Python: point at `py:` when such a Python module is here.
    const python = ['.py', '/__init__.py'].some((end) => existsSync(join(cwd, ...moduleName.split('.')) + end))
    if (python && error instanceof CliError) error.message += `; for the Python module, use --policy py:${spec}`
    throw error
  }
  let mod: Record<string, unknown>
  try {
    mod = (/\.(?:[cm]?ts|tsx)$/.test(url) ? await importTypeScript(url) : await import(url)) as Record<string, unknown>
  } catch (error) {
    if (error instanceof CliError) throw error
    throw configError(`cannot import policy module ${moduleName}: ${(error as Error).message}`)
  }
  let value: unknown = mod
  let holder: Record<string, unknown> | undefined
  for (const part of attribute.split('.')) {
    holder = value as Record<string, unknown> | undefined
    const direct = holder?.[part]
    if (direct === undefined && holder === mod) holder = mod.default as Record<string, unknown> | undefined
    value = direct ?? holder?.[part]
    if (value === undefined) throw configError(`policy module ${moduleName} has no attribute "${attribute}" (missing "${part}")`)
  }
  if (typeof value !== 'function') throw configError(`${moduleName}:${attribute} is a ${typeof value}, not a function`)
  const act = value as PolicyObject['act']
  const reset = holder?.reset
  if (reset !== undefined && typeof reset !== 'function') throw configError(`${moduleName}: "reset" beside ${attribute} is a ${typeof reset}, not a function`)
  // Called as plain functions, as before there was a reset hook (stack traces name the policy's function).
  return reset
    ? { act: (obs, context) => act(obs, context), reset: (context) => (reset as NonNullable<PolicyObject['reset']>)(context) }
    : { act: (obs, context) => act(obs, context) }
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

/**
 * A TypeScript policy module through tsx's `tsImport`, which compiles it as
 * its project says (ES module or CommonJS; `register()` alone left a .ts file
 * of a CommonJS project to Node's require(esm), which refused it).
 */
async function importTypeScript(url: string): Promise<unknown> {
  let tsImport: (specifier: string, parentURL: string) => Promise<unknown>
  try {
    ;({ tsImport } = await import('tsx/esm/api'))
  } catch (error) {
    throw configError(`loading a TypeScript policy needs the tsx package (${(error as Error).message}); or compile it to .js`)
  }
  return await tsImport(url, import.meta.url)
}

/** `--prompt` and `--prompt-field` as `websocketPolicy`'s `prompt`: the field's text per episode, else the fixed one. */
function promptOf({ prompt, promptField }: LoadPolicyOptions): string | ((context: EpisodeContext) => string) | undefined {
  if (promptField === undefined) return prompt
  return (context) => {
    const value = context.metadata?.[promptField]
    if (typeof value === 'string') return value
    if (prompt !== undefined) return prompt
    throw new TypeError(
      `baseline ${context.baselineEpisodeId} has no text metadata.${promptField} for the prompt (--prompt-field); pass --prompt as the fallback`,
    )
  }
}
