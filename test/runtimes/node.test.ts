/**
 * The runtime-neutral suite against examples/node/server.ts run by Node (tsx)
 * on PostgreSQL: the service embedded in an existing node:http server under
 * /episodic.
 */
import { expect, it } from 'vitest'
import { describeRuntime } from './suite.ts'

describeRuntime('node', (service) => {
  it("leaves the host server's own routes alone and answers unknown paths under the prefix with the service's 404", async () => {
    const host = await fetch(new URL('/', service().url))
    expect(await host.text()).toBe('the existing application\n')
    const unknown = await fetch(`${service().url}/no/such/route`)
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ error: expect.any(String) })
  })

  // REPLAY HOOK: the replay client on Node (runAgainst with a small policy)
  // goes here. The running service is the callback's argument; run the client
  // with runScript('node', 'test/runtimes/<script>.ts', { EPISODIC_BASE_URL:
  // service().url, EPISODIC_API_KEY: (await service().newTenant()).key }) from
  // ./harness.ts. Baseline artifacts can be PUT through the open endpoint's URLs.
})
