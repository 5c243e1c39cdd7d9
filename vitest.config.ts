import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { SlowestFirstSequencer } from './test/sequencer.ts'

/**
 * Timeouts are for hangs, not for pacing: on a busy 2-core machine a
 * PGlite start or a child runtime can take ten times its idle time, so they
 * are generous (EPISODIC_TEST_TIMEOUT_SCALE multiplies them further).
 * Most suites wait on child processes, sockets and WASM, not the CPU, so
 * one worker more than the cores keeps both cores busy. See docs/testing.md.
 */
const scale = Number(process.env.EPISODIC_TEST_TIMEOUT_SCALE ?? 1) || 1

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'adapters/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Files share their worker's module cache instead of importing Hono,
    // Kysely and PGlite afresh each: 280 s against 383 s for the warm suite
    // (2026-11-23, 2 cores). Safe because no test mocks modules, stubs
    // globals or changes process.env; each file closes what it starts.
    isolate: false,
    maxWorkers: Math.max(2, availableParallelism() + 1),
    testTimeout: 300_000 * scale,
    hookTimeout: 600_000 * scale,
    teardownTimeout: 60_000 * scale,
    slowTestThreshold: 10_000,
    sequence: { sequencer: SlowestFirstSequencer },
  },
})
