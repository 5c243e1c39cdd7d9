/**
 * The conformance suite, written once: the ingest tests (ingest.ts) and the
 * eval-run and read tests (eval.ts) against one started target. Callers:
 * in-process.test.ts (PGlite and PostgreSQL through `app.request`) and
 * test/runtimes/<runtime>.test.ts (over HTTP on Node, Deno, Bun, Workers).
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { evalConformance } from './eval.ts'
import { ingestConformance } from './ingest.ts'
import type { Target } from './target.ts'

/**
 * Defines `name` as a describe block that starts a target with `start`, runs
 * the whole suite against it, then `extra` (tests only that target has).
 * `block` is `describe.skip` where the target cannot run here.
 */
export function describeConformance<T extends Target>(
  name: string,
  start: () => Promise<T>,
  extra?: (target: () => T) => void,
  block: (name: string, body: () => void) => void = describe,
): void {
  block(name, () => {
    let target: T
    beforeAll(async () => {
      target = await start()
    })
    afterAll(() => target?.close())
    const get = () => target
    describe('ingest', () => ingestConformance(get))
    describe('eval runs and reads', () => evalConformance(get))
    extra?.(get)
  })
}
