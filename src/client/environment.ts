/**
 * The one place the client looks at its runtime: environment variables, the
 * home folder, and reading a text file. Node, Deno and Bun all answer through
 * `process` (Deno and Bun provide it too) or `Deno`; anything else (Workers, a
 * browser) has no environment and no files, so options must be passed.
 */
import type { ChildProcessModule } from '../replay/python/process.ts'

/**
 * What the client reads from its runtime, so the rest of the library never
 * touches `process` or `Deno` itself: tests and hosts without an environment
 * (Workers, a browser) pass one in.
 */
export interface ClientEnvironment {
  /** The environment variables (`EPISODIC_API_KEY`, `EPISODIC_BASE_URL`, ...). */
  env: Record<string, string | undefined>
  /** node:zlib's `inflateRawSync` where the runtime has it (Node, Deno, Bun): ~3x fflate. */
  inflateRawSync?: (data: Uint8Array, options: { chunkSize?: number; info?: false }) => Uint8Array
  /** node:zlib's `crc32` where the runtime has it (Node 20.15+, Deno, Bun): ~7x the JavaScript one. */
  crc32?: (data: Uint8Array) => number
  /** node:child_process where the runtime has it (Node, Deno, Bun): `pythonPolicy` starts its bridge with it. */
  childProcess?: ChildProcessModule
  /** Resolves the file's text, or undefined when it does not exist. */
  readTextFile(path: string): Promise<string | undefined>
}

interface ProcessLike {
  env?: Record<string, string | undefined>
  getBuiltinModule?(name: string): unknown
}

interface FsPromises {
  readFile(path: string, encoding: 'utf8'): Promise<string>
}

/** The running runtime's environment (empty where there is none). */
export function runtimeEnvironment(): ClientEnvironment {
  const proc = (globalThis as { process?: ProcessLike }).process
  const deno = (globalThis as { Deno?: { env: { toObject(): Record<string, string> }; readTextFile(p: string): Promise<string> } }).Deno
  const env = proc?.env ?? deno?.env.toObject() ?? {}
  const zlib = proc?.getBuiltinModule?.('zlib') as Pick<ClientEnvironment, 'inflateRawSync' | 'crc32'> | undefined
  return {
    env,
    inflateRawSync: zlib?.inflateRawSync,
    crc32: typeof zlib?.crc32 === 'function' ? zlib.crc32 : undefined,
    childProcess: proc?.getBuiltinModule?.('child_process') as ChildProcessModule | undefined,
    async readTextFile(path) {
      try {
        if (deno) return await deno.readTextFile(path)
        const fs = proc?.getBuiltinModule?.('fs/promises') as FsPromises | undefined
        return fs ? await fs.readFile(path, 'utf8') : undefined
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOENT' || (error as Error).name === 'NotFound') return undefined
        throw error
      }
    },
  }
}
