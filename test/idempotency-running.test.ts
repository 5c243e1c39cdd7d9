/**
 * Idempotency-Key while the first request is still running (contract,
 * "Upload recovery": "the same key while the first request is still running
 * -> 409"), with real concurrency rather than a planted row: the first
 * request's insert is held inside its transaction (as a large eval-run
 * create holds the embedded database's one connection) and a retry with the
 * same key arrives meanwhile.
 */
import {
  InsertQueryNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from './helpers/http.ts'
import { startService, type TestService } from './helpers/service.ts'

/** Holds the result of the next INSERT into a table until `release()`; the connection stays taken meanwhile. */
class HoldInsert implements KyselyPlugin {
  private armed: string | undefined
  private readonly marked = new WeakSet<object>()
  private releaseHeld: (() => void) | undefined
  private reached: (() => void) | undefined
  /** Resolves once the held insert has run and waits. */
  held: Promise<void> = Promise.resolve()

  arm(table: string): void {
    this.armed = table
    this.held = new Promise((resolve) => (this.reached = resolve))
  }

  release(): void {
    this.releaseHeld?.()
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node
    if (this.armed && InsertQueryNode.is(node) && node.into?.table.identifier.name === this.armed) {
      this.armed = undefined
      this.marked.add(args.queryId)
    }
    return node
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.marked.has(args.queryId)) {
      const wait = new Promise<void>((resolve) => (this.releaseHeld = resolve))
      this.reached?.()
      await wait
    }
    return args.result
  }
}

describe('Idempotency-Key: a retry while the first request runs', () => {
  let svc: TestService
  let key: string
  const hold = new HoldInsert()

  beforeAll(async () => {
    svc = await startService('pglite', { plugins: [hold], listen: false })
    key = (await svc.newTenant()).key
    baseline = (await call(`${svc.url}/api/ingest/episode`, { key, body: { request_uploads: [] } }, here)).body.episode_id
  }, 120_000)
  afterAll(async () => await svc?.close())

  const here = (url: string, init: RequestInit) => Promise.resolve(svc.app.request(url, init))
  let baseline: string
  const create = (k: string, name: string) =>
    call(`${svc.url}/api/ingest/eval-run`, {
      key,
      body: { candidate_policy_version: 'v2', baseline_episode_ids: [baseline], name },
      headers: { 'idempotency-key': k },
    }, here)

  it('answers 409 (422 for another body), and the first answer replays once it is done', async () => {
    const k = `running-${Math.random()}`
    hold.arm('eval_runs')
    const first = create(k, 'slow')
    await hold.held
    // Without an answer within 3 s the retry is waiting for the first request to end, not refused.
    const retries = Promise.all([create(k, 'slow'), create(k, 'other')])
    const early = await Promise.race([retries, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3000))])
    hold.release()
    const done = await first
    expect(done.status).toBe(201)
    expect(early).not.toBeNull()
    const [busy, other] = early!
    expect([busy.status, busy.body]).toEqual([409, { error: `a request with Idempotency-Key "${k}" is still in progress; retry later` }])
    expect(busy.headers.get('idempotency-replayed')).toBeNull()
    expect(other.status).toBe(422)
    const again = await create(k, 'slow')
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotency-replayed')).toBe('true')
    expect(again.body.eval_run_id).toBe(done.body.eval_run_id)
  }, 60_000)
})
