/**
 * The runtime-neutral suite against examples/node/server.ts run by Node (tsx)
 * on PostgreSQL: the service embedded in an existing node:http server under
 * /episodic.
 */
import { expect, it } from 'vitest'
import { replayClientTest } from './replay.ts'
import { describeRuntime } from './suite.ts'

describeRuntime('node', (service) => {
  it("leaves the host server's own routes alone and answers unknown paths under the prefix with the service's 404", async () => {
    const host = await fetch(new URL('/', service().url))
    expect(await host.text()).toBe('the existing application\n')
    const unknown = await fetch(`${service().url}/no/such/route`)
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ error: expect.any(String) })
  })

  replayClientTest('node', service)
})
