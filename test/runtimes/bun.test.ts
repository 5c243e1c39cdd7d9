/**
 * The runtime-neutral suite against examples/bun/server.ts run by `bun` from npm on PostgreSQL.
 */
import { replayClientTest } from './replay.ts'
import { describeRuntime } from './suite.ts'

describeRuntime('bun', (service) => {
  replayClientTest('bun', service)
})
