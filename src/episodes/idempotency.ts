/**
 * `Idempotency-Key` (contract, "Safe retries"): a client that timed out can
 * send the same request again and get the first answer instead of a second
 * episode or eval run. The key is kept per client for 24 hours in one table
 * row whose primary key is (client, key), so retries that reach different
 * instances at once meet in the database, not in a process-local map:
 *
 * - first request: the row is inserted `running`, the handler runs, the row
 *   becomes `done` with the answer (a failed request deletes it: nothing was
 *   created, the retry runs afresh);
 * - same key, same request, answer stored: that answer again, with
 *   `Idempotency-Replayed: true` (a route may refresh parts of it, such as
 *   upload URLs);
 * - same key, another request (method, path or body bytes differ): 422;
 * - same key while the first is still running: 409. A `running` row older
 *   than `LEASE_MS` belonged to a process that died mid-request and is taken
 *   over. That process may have created the resource before it died (its
 *   insert commits apart from the key's `done`), so the id a keyed request
 *   creates is derived from the client, the key and the key's first use
 *   (`c.get('idempotency')`): the request that takes over finds what the
 *   first one made under that id and answers with it instead of making a
 *   second one. Requests running in this process are also known in memory and
 *   answered before the database is asked: on the embedded database the
 *   first request's transaction holds its one connection, so a retry that
 *   asked it would wait for the first to end and replay it instead of
 *   hearing 409.
 *
 * The request is fingerprinted by the JSON its body holds (the IETF
 * draft's "request fingerprint"), keys sorted and numbers as they parse: a
 * retry that serializes the same value again, in another key order or with
 * other whitespace, is the same request; another value is another request.
 */
import { createMiddleware } from 'hono/factory'
import type { Context } from 'hono'
import type { AppEnv, Deps } from '../context.ts'
import { sha256Hex } from '../crypto.ts'
import { EpisodicError } from '../errors.ts'
import { readBodyText, requireJsonContentType } from '../http/body.ts'
import { hexUuid } from '../http/fields.ts'
import { IDEMPOTENCY_KEY_SYNTAX } from './ingest-schemas.ts'
import { jsonText, parseJson, sendJson } from '../http/json.ts'

/** Keys are kept this long. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/** A `running` key older than this is taken over (its request cannot still be running). */
export const LEASE_MS = 60 * 1000
/** The header; 1..255 printable ASCII characters. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key'

/** Per database: `<client>\n<key>` -> fingerprint of the request running with that key in this process. */
const RUNNING = new WeakMap<object, Map<string, string>>()

function runningIn(db: object): Map<string, string> {
  let running = RUNNING.get(db)
  if (!running) RUNNING.set(db, running = new Map())
  return running
}

const inProgress = (key: string) =>
  new EpisodicError('conflict', `a request with ${IDEMPOTENCY_HEADER} ${JSON.stringify(key)} is still in progress; retry later`)
const reusedKey = (key: string) => new EpisodicError('unprocessable', `${IDEMPOTENCY_HEADER} ${JSON.stringify(key)} was already used for a different request`)

/** Refreshes a stored answer before it is replayed (e.g. mints new upload URLs). */
export type Replay = (stored: unknown, c: Context<AppEnv>) => Promise<unknown>

/**
 * Middleware for a create route: mount it after authentication, before the
 * handler. Without the header it does nothing.
 *
 * @example
 * app.post('/episode', idempotent(deps, reopen), async (c) => { ... })
 */
export function idempotent(deps: Pick<Deps, 'db' | 'clock' | 'sha256' | 'bodyLimit'>, replay?: Replay) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_HEADER)
    if (key === undefined) return next()
    if (!IDEMPOTENCY_KEY_SYNTAX.test(key)) throw new EpisodicError('invalid', `${IDEMPOTENCY_HEADER}: must be 1 to 255 printable ASCII characters`)
    // A body the route would refuse (415) is refused before a replay could answer it.
    requireJsonContentType(c.req.raw)
    const clientId = c.get('clientId')
    // The handler reads the body itself; the fingerprint reads a copy.
    const text = await readBodyText(c.req.raw.clone(), deps.bodyLimit)
    const fingerprint = await sha256Hex(deps.sha256, `${c.req.method}\n${new URL(c.req.url).pathname}\n${canonicalJson(text)}`)
    const now = deps.clock.now()
    // The same checks as the row's, in their order (another body first), for a request running here.
    const running = runningIn(deps.db)
    const slot = `${clientId}\n${key}`
    const here = running.get(slot)
    if (here !== undefined) throw here === fingerprint ? inProgress(key) : reusedKey(key)

    const taken = await take(deps, clientId, key, fingerprint, now)
    if (taken.kind === 'replay') {
      // Written as the routes write (`sendJson`): a bigint in the stored answer keeps every digit.
      const body = replay ? await replay(taken.response, c) : taken.response
      return sendJson(body, taken.status, { 'idempotency-replayed': 'true' })
    }
    running.set(slot, fingerprint)
    c.set('idempotency', { id: await resourceId(deps.sha256, clientId, key, taken.firstUsed), retaken: taken.retaken })
    try {
      await next()
      const ok = c.res.status >= 200 && c.res.status < 300 && !c.error
      if (!ok) {
        await release(deps, clientId, key, taken.lockedAt)
        return
      }
      const response = await c.res.clone().text()
      await deps.db
        .updateTable('idempotency_keys')
        .set({ state: 'done', status: c.res.status, response })
        .where('client_id', '=', clientId)
        .where('key', '=', key)
        .where('locked_at', '=', taken.lockedAt)
        .execute()
    } finally {
      // Forgotten only once the row says `done` (or is gone), so a retry after this asks the database.
      running.delete(slot)
    }
  })
}

type Taken = { kind: 'run'; lockedAt: Date; firstUsed: Date; retaken: boolean } | { kind: 'replay'; status: number; response: unknown }

/**
 * The id a request with this key creates its resource under: a UUID (v4
 * form) from a hash of the client, the key and when the key was first used,
 * so a request that takes over from a dead one names the same resource,
 * while the same key reused after its 24 hours names a new one.
 */
async function resourceId(sha256: Deps['sha256'], clientId: string, key: string, firstUsed: Date): Promise<string> {
  const hex = (await sha256Hex(sha256, `idempotent resource\n${clientId}\n${key}\n${firstUsed.toISOString()}`)).slice(0, 32).split('')
  hex[12] = '4'
  hex[16] = '89ab'[parseInt(hex[16]!, 16) & 3]!
  return hexUuid(hex.join(''))
}

/** Claims the key for this request, or says why not (replay, 409, 422). */
async function take(deps: Pick<Deps, 'db'>, clientId: string, key: string, fingerprint: string, now: Date): Promise<Taken> {
  const expired = new Date(now.getTime() - IDEMPOTENCY_TTL_MS)
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await deps.db
      .insertInto('idempotency_keys')
      .values({ client_id: clientId, key, fingerprint, state: 'running', status: null, response: null, locked_at: now, created_at: now })
      .onConflict((oc) => oc.columns(['client_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst()
    if (inserted) {
      // Old keys of this client go as new ones arrive (bounded: 24 h of keys).
      await deps.db.deleteFrom('idempotency_keys').where('client_id', '=', clientId).where('created_at', '<', expired).execute()
      return { kind: 'run', lockedAt: now, firstUsed: now, retaken: false }
    }
    const row = await deps.db.selectFrom('idempotency_keys').selectAll().where('client_id', '=', clientId).where('key', '=', key).executeTakeFirst()
    if (!row) continue // released meanwhile: try again
    if (new Date(row.created_at).getTime() < expired.getTime()) {
      await deps.db.deleteFrom('idempotency_keys').where('client_id', '=', clientId).where('key', '=', key).where('created_at', '=', row.created_at).execute()
      continue
    }
    if (row.fingerprint !== fingerprint) throw reusedKey(key)
    if (row.state === 'done') {
      // Read back losslessly: `JSON.parse` would round an integer past 2^53 (eval-run metadata may hold one).
      return { kind: 'replay', status: row.status ?? 200, response: parseJson(row.response ?? 'null') }
    }
    if (now.getTime() - new Date(row.locked_at).getTime() < LEASE_MS) throw inProgress(key)
    // The first request's process died mid-request: take the key over, unless another retry just did.
    const retaken = await deps.db
      .updateTable('idempotency_keys')
      .set({ locked_at: now })
      .where('client_id', '=', clientId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .where('locked_at', '=', row.locked_at)
      .executeTakeFirst()
    if (Number(retaken.numUpdatedRows) === 1) return { kind: 'run', lockedAt: now, firstUsed: new Date(row.created_at), retaken: true }
  }
  throw inProgress(key)
}

/** Forgets a key whose request failed, so a retry runs it afresh. */
async function release(deps: Pick<Deps, 'db'>, clientId: string, key: string, lockedAt: Date): Promise<void> {
  await deps.db
    .deleteFrom('idempotency_keys')
    .where('client_id', '=', clientId)
    .where('key', '=', key)
    .where('state', '=', 'running')
    .where('locked_at', '=', lockedAt)
    .execute()
}

/**
 * The body's JSON value written with sorted keys, so that bodies holding the
 * same value fingerprint alike (an empty body is `{}`, as the routes read
 * it); text that is not JSON stays as it is (the route answers it 400).
 *
 * @example
 * canonicalJson('{ "b": 1.0, "a": [2] }') === canonicalJson('{"a":[2],"b":1}') // true
 */
export function canonicalJson(text: string): string {
  if (text.trim() === '') return '{}'
  let value: unknown
  try {
    value = parseJson(text)
  } catch {
    return text
  }
  return jsonText(sortedKeys(value))
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    // defineProperty: a "__proto__" key stays an ordinary key.
    Object.defineProperty(out, key, { value: sortedKeys((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true })
  }
  return out
}
