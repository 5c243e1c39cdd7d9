/**
 * The runtime-neutral suite against examples/deno/server.ts run by `deno` from npm on PostgreSQL.
 */
import { describeRuntime } from './suite.ts'

describeRuntime('deno', () => {
  // REPLAY HOOK: the replay client on Deno (runAgainst with a small policy)
  // goes here. The running service is the callback's argument; run the client
  // with runScript('deno', 'test/runtimes/<script>.ts', { EPISODIC_BASE_URL:
  // service().url, EPISODIC_API_KEY: (await service().newTenant()).key }) from
  // ./harness.ts. Baseline artifacts can be PUT through the open endpoint's URLs.
})
