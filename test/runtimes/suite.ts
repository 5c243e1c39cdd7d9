/**
 * The conformance suite (test/conformance/suite.ts) over HTTP on one runtime:
 * each test/runtimes/<runtime>.test.ts calls `describeRuntime` once; the
 * suite knows nothing about how the service was started (see harness.ts).
 *
 * Needs the real PostgreSQL server (TEST_DATABASE_URL): without it the suite
 * is skipped loudly, and under CI=true that is a failure instead.
 */
import { describe } from 'vitest'
import { describeConformance } from '../conformance/suite.ts'
import { postgresAvailable } from '../helpers/postgres.ts'
import { type RuntimeName, type RuntimeService, startRuntime } from './harness.ts'

/**
 * Defines the suite for one runtime. `extra` adds runtime-specific tests that
 * need the running service (see the REPLAY HOOK in the runtime test files).
 */
export function describeRuntime(runtime: RuntimeName, extra?: (service: () => RuntimeService) => void): void {
  describeConformance(`service on ${runtime} (PostgreSQL)`, () => startRuntime(runtime), extra, postgresAvailable() ? describe : describe.skip)
}
