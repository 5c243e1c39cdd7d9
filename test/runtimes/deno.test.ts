/**
 * The runtime-neutral suite against examples/deno/server.ts run by `deno` from npm on PostgreSQL.
 */
import { replayClientTest } from './replay.ts'
import { describeRuntime } from './suite.ts'

describeRuntime('deno', (service) => {
  replayClientTest('deno', service)
})
