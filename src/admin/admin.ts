/**
 * Administration: clients, API keys and archiving. These are CLI verbs, never
 * HTTP endpoints (contract, "API keys"); the CLI calls them on the database
 * directly, or through the running server's control socket on the embedded
 * default (see adapters/node/control.ts).
 */
import { type Kysely, sql } from 'kysely'
import { REVOCATION_CHANNEL } from '../db/notify.ts'
import { type Clock, iso, systemClock } from '../clock.ts'
import { type Random, type Sha256Ctor, sha256Hex, webRandom } from '../crypto.ts'
import type { Database } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import { isUuid } from '../http/fields.ts'
import { mintApiKey } from '../auth/keys.ts'

/**
 * What the admin verbs need, passed in as capabilities like everywhere else in
 * the core (the CLI builds them from its configuration).
 *
 * @example
 * const deps: AdminDeps = { db, sha256: Sha256 }
 * const client = await createClient(deps, 'robot-lab')
 * const { key } = await createKey(deps, 'robot-lab') // shown once
 */
export interface AdminDeps {
  /** The migrated service database. */
  db: Kysely<Database>
  /** Hashes new key secrets; only the hash is stored. */
  sha256: Sha256Ctor
  /** Source of ids and key secrets; defaults to {@link webRandom}. */
  random?: Random
  /** Stamps `created_at` / `revoked_at` / `updated_at`; defaults to {@link systemClock}. */
  clock?: Clock
}

/** A client (one robot fleet, team or CI job) as the admin verbs print it. */
export interface ClientInfo {
  /** The client's UUID; episodes and eval runs belong to it. */
  id: string
  /** The unique name given at creation, used by every other verb. */
  name: string
  /** When the client was created (ISO 8601 UTC). */
  created_at: string
}

/** An API key's public facts; its secret is never stored, so it never appears here. */
export interface KeyInfo {
  /** The middle part of `epk_<key_id>_<secret>`, the handle used to revoke it. */
  key_id: string
  /** Name of the client the key acts as. */
  client: string
  /** When the key was minted (ISO 8601 UTC). */
  created_at: string
  /** When the key was revoked (ISO 8601 UTC), or `null` while it is live. */
  revoked_at: string | null
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** Creates a client; names are 1-64 characters of letters, digits, `.`, `_`, `-`. */
export async function createClient(deps: AdminDeps, name: string): Promise<ClientInfo> {
  if (!NAME_RE.test(name)) {
    throw new EpisodicError('invalid', 'client name must be 1-64 characters of letters, digits, ".", "_" or "-"')
  }
  const now = (deps.clock ?? systemClock).now()
  const id = (deps.random ?? webRandom).uuid()
  const row = await deps.db
    .insertInto('clients')
    .values({ id, name, created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning(['id', 'name', 'created_at'])
    .executeTakeFirst()
  if (!row) throw new EpisodicError('conflict', `client "${name}" already exists`)
  return { id: row.id, name: row.name, created_at: iso(row.created_at) }
}

/** Lists clients by name. */
export async function listClients(deps: AdminDeps): Promise<ClientInfo[]> {
  const rows = await deps.db.selectFrom('clients').selectAll().orderBy('name').execute()
  return rows.map((r) => ({ id: r.id, name: r.name, created_at: iso(r.created_at) }))
}

async function clientByName(deps: AdminDeps, name: string): Promise<{ id: string; name: string }> {
  const row = await deps.db.selectFrom('clients').select(['id', 'name']).where('name', '=', name).executeTakeFirst()
  if (!row) throw new EpisodicError('not_found', `no client named "${name}"`)
  return row
}

/** Mints a key for a client; the returned `key` is shown once and never stored. */
export async function createKey(deps: AdminDeps, clientName: string): Promise<KeyInfo & { key: string }> {
  const client = await clientByName(deps, clientName)
  const minted = mintApiKey(deps.random ?? webRandom)
  const now = (deps.clock ?? systemClock).now()
  await deps.db
    .insertInto('api_keys')
    .values({
      key_id: minted.keyId,
      client_id: client.id,
      secret_sha256: await sha256Hex(deps.sha256, minted.secret),
      created_at: now,
    })
    .execute()
  return { key: minted.key, key_id: minted.keyId, client: client.name, created_at: now.toISOString(), revoked_at: null }
}

/** Lists a client's keys (ids only; secrets are never stored). */
export async function listKeys(deps: AdminDeps, clientName: string): Promise<KeyInfo[]> {
  const client = await clientByName(deps, clientName)
  const rows = await deps.db
    .selectFrom('api_keys')
    .select(['key_id', 'created_at', 'revoked_at'])
    .where('client_id', '=', client.id)
    .orderBy('created_at')
    .execute()
  return rows.map((r) => ({
    key_id: r.key_id,
    client: client.name,
    created_at: iso(r.created_at),
    revoked_at: r.revoked_at ? iso(r.revoked_at) : null,
  }))
}

/** Revokes a key by id (the middle part of `epk_<key_id>_<secret>`). Idempotent. */
export async function revokeKey(deps: AdminDeps, keyId: string, client?: string): Promise<KeyInfo> {
  if (client !== undefined) {
    const owner = await deps.db
      .selectFrom('api_keys')
      .innerJoin('clients', 'clients.id', 'api_keys.client_id')
      .select('clients.name')
      .where('api_keys.key_id', '=', keyId)
      .executeTakeFirst()
    if (owner && owner.name !== client) {
      throw new EpisodicError('not_found', `key "${keyId}" is not a key of client "${client}" (it is ${JSON.stringify(owner.name)}'s); nothing revoked`)
    }
  }
  const now = (deps.clock ?? systemClock).now()
  await deps.db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('key_id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute()
  // Servers on PostgreSQL drop the key from their caches at once (src/db/notify.ts).
  await sql`select pg_notify(${REVOCATION_CHANNEL}, ${keyId})`.execute(deps.db)
  const current = await deps.db
    .selectFrom('api_keys')
    .innerJoin('clients', 'clients.id', 'api_keys.client_id')
    .select(['api_keys.key_id', 'clients.name', 'api_keys.created_at', 'api_keys.revoked_at'])
    .where('api_keys.key_id', '=', keyId)
    .executeTakeFirst()
  if (!current) throw new EpisodicError('not_found', `no key with id "${keyId}"`)
  return {
    key_id: current.key_id,
    client: current.name,
    created_at: iso(current.created_at),
    revoked_at: current.revoked_at ? iso(current.revoked_at) : null,
  }
}

/** Moves an episode of any client to `archived`; finalize then answers 409. */
export async function archiveEpisode(deps: AdminDeps, episodeId: string): Promise<{ episode_id: string; status: 'archived'; previous_status: string }> {
  if (!isUuid(episodeId)) throw new EpisodicError('not_found', `no episode with id "${episodeId}"`)
  const now = (deps.clock ?? systemClock).now()
  const before = await deps.db.selectFrom('episodes').select('status').where('id', '=', episodeId).executeTakeFirst()
  if (!before) throw new EpisodicError('not_found', `no episode with id "${episodeId}"`)
  await deps.db.updateTable('episodes').set({ status: 'archived', updated_at: now }).where('id', '=', episodeId).execute()
  return { episode_id: episodeId, status: 'archived', previous_status: before.status }
}
