/**
 * Episode rows: insert at open, the finalize rule, and the row-to-wire mapper.
 * Finalize is one UPDATE that merges metadata per key with `||`, so concurrent
 * finalizes never lose a key, and a `ready` episode keeps its status and its
 * `updated_at` (finalizing again returns the same payload).
 */
import { CompiledQuery, type Kysely, type Selectable } from 'kysely'
import { EpisodicError } from '../errors.ts'
import { prepareQuery, type PreparedQuery } from '../db/prepared.ts'
import type { Database, EpisodesTable } from '../db/schema.ts'
import type { ArtifactKind } from '../storage/types.ts'
import type { Episode, FinalizeEpisodeResult } from './schemas.ts'

export interface NewEpisode {
  id: string
  clientId: string
  name: string | null
  source: 'real' | 'sim' | 'replay'
  robot: string | null
  policyVersion: string | null
  envVersion: string | null
  gitSha: string | null
  seed: number | null
  fps: number | null
  metadata: Record<string, unknown>
  artifacts: ArtifactKind[]
  now: Date
}

/** The row an insert writes, from its parameters (prepareQuery's stand-ins). */
const insertRow = (p: Readonly<Record<keyof InsertParams, unknown>>) => ({
  id: p.id as string,
  client_id: p.clientId as string,
  name: p.name as string | null,
  source: p.source as NewEpisode['source'],
  robot: p.robot as string | null,
  policy_version: p.policyVersion as string | null,
  env_version: p.envVersion as string | null,
  git_sha: p.gitSha as string | null,
  seed: p.seed as string | null,
  fps: p.fps as number | null,
  metadata: p.metadata as string,
  status: 'recording' as const,
  artifacts: p.artifacts as ArtifactKind[],
  created_at: p.now as Date,
  updated_at: p.now as Date,
})

const INSERT_PARAMS = ['id', 'clientId', 'name', 'source', 'robot', 'policyVersion', 'envVersion', 'gitSha', 'seed', 'fps', 'metadata', 'artifacts', 'now'] as const

/** Inserts a `recording` episode (a prepared statement: the open path's hot query). */
export async function insertEpisode(db: Kysely<Database>, e: NewEpisode): Promise<void> {
  await insertEpisodes(db, [e])
}

/**
 * Removes an episode that open inserted but could not hand out (its upload
 * URLs failed to sign). Only a `recording` row of that client is touched.
 */
export async function discardEpisode(db: Kysely<Database>, clientId: string, episodeId: string): Promise<void> {
  await db.deleteFrom('episodes').where('id', '=', episodeId).where('client_id', '=', clientId).where('status', '=', 'recording').execute()
}

/**
 * The INSERT of `count` rows, prepared once per row count (a batch used to
 * pay Kysely's build and compile, ~0.15 ms, every time). Parameter
 * `row * INSERT_PARAMS.length + i` is `INSERT_PARAMS[i]` of that row; `names`
 * holds those names.
 */
const insertMany = (() => {
  const bySize = new Map<number, { names: string[]; run: PreparedQuery<string, unknown> }>()
  return (count: number) => {
    let statement = bySize.get(count)
    if (statement === undefined) {
      const names = Array.from({ length: count }, (_, row) => INSERT_PARAMS.map((param) => `${row}.${param}`)).flat()
      const rowOf = (p: Readonly<Record<string, unknown>>, row: number) =>
        Object.fromEntries(INSERT_PARAMS.map((param) => [param, p[`${row}.${param}`]])) as Record<keyof InsertParams, unknown>
      const run = prepareQuery(names, (db, p) => db.insertInto('episodes').values(Array.from({ length: count }, (_, row) => insertRow(rowOf(p, row)))))
      bySize.set(count, (statement = { names, run }))
    }
    return statement
  }
})()

/** Inserts several `recording` episodes in one statement (see `db/batch.ts`). */
export async function insertEpisodes(db: Kysely<Database>, episodes: readonly NewEpisode[]): Promise<void> {
  const { names, run } = insertMany(episodes.length)
  const values: Record<string, unknown> = {}
  let at = 0
  for (const episode of episodes) {
    const p = toInsertParams(episode)
    for (const param of INSERT_PARAMS) values[names[at++]!] = p[param]
  }
  await run(db, values)
}

type InsertParams = ReturnType<typeof toInsertParams>

/** The row's parameters as the database takes them: seed as int8 text, metadata as JSON text. */
function toInsertParams(e: NewEpisode) {
  return { ...e, seed: e.seed === null ? null : BigInt(e.seed).toString(), metadata: JSON.stringify(e.metadata) }
}

export interface FinalizeChange {
  status: 'ready' | 'failed'
  durationS?: number | null
  fps?: number | null
  bytesTotal?: number | null
  metadata?: Record<string, unknown>
  now: Date
}

/** One finalize to apply: whose episode, which, and the change. */
export interface FinalizeItem {
  clientId: string
  episodeId: string
  change: FinalizeChange
}

/** What the finalize UPDATE returns; none when the episode is unknown, foreign or archived. */
export interface FinalizedRow {
  id: string
  status: string
  updated_at: Date | string
}

const finalizeParams = ({ clientId, episodeId, change }: FinalizeItem) => ({
  clientId,
  episodeId,
  status: change.status,
  durationS: change.durationS ?? null,
  fps: change.fps ?? null,
  bytesTotal: change.bytesTotal ?? null,
  metadata: JSON.stringify(change.metadata ?? {}),
  now: change.now,
})

/** Parameter, column and cast of each VALUES slot of the finalize statement. */
const FINALIZE_VALUES = [
  ['clientId', 'client_id', 'text'],
  ['episodeId', 'id', 'uuid'],
  ['status', 'status', 'text'],
  ['durationS', 'duration_s', 'float8'],
  ['fps', 'fps', 'float8'],
  ['bytesTotal', 'bytes_total', 'int8'],
  ['metadata', 'metadata', 'jsonb'],
  ['now', 'now', 'timestamptz'],
] as const

/**
 * The finalize rule as one UPDATE over `count` rows of VALUES. Its text
 * depends only on `count`, so it is built once per size and the drivers
 * reuse their prepared statement.
 */
const finalizeSql = (() => {
  const texts = new Map<number, string>()
  const width = FINALIZE_VALUES.length
  return (count: number): string => {
    let text = texts.get(count)
    if (text === undefined) {
      const rows = Array.from({ length: count }, (_, row) => `(${FINALIZE_VALUES.map(([, , cast], i) => `$${row * width + i + 1}::${cast}`).join(', ')})`)
      text = `update episodes as e set
          status = case when e.status = 'ready' then 'ready' else v.status end,
          duration_s = coalesce(v.duration_s, e.duration_s),
          fps = coalesce(v.fps, e.fps),
          bytes_total = coalesce(v.bytes_total, e.bytes_total),
          metadata = coalesce(e.metadata, '{}'::jsonb) || v.metadata,
          updated_at = case when e.status = 'ready' then e.updated_at else v.now end
        from (values ${rows.join(', ')}) as v(${FINALIZE_VALUES.map(([, column]) => column).join(', ')})
        where e.id = v.id and e.client_id = v.client_id and e.status <> 'archived'
        returning e.id, e.status, e.updated_at`
      texts.set(count, text)
    }
    return text
  }
})()

/**
 * Applies finalizes in one statement, one result per item. An episode named
 * twice is updated in a later statement, because one UPDATE changes a row at
 * most once and the second merge would be lost.
 */
export async function applyFinalizes(db: Kysely<Database>, items: readonly FinalizeItem[]): Promise<(FinalizedRow | undefined)[]> {
  const results = new Array<FinalizedRow | undefined>(items.length)
  let round = items.map((item, index) => ({ item, index }))
  while (round.length > 0) {
    const ids = new Set<string>()
    const now: typeof round = []
    const later: typeof round = []
    for (const entry of round) {
      ;(ids.has(entry.item.episodeId) ? later : now).push(entry)
      ids.add(entry.item.episodeId)
    }
    const parameters: unknown[] = []
    for (const { item } of now) {
      const p = finalizeParams(item)
      for (const [param] of FINALIZE_VALUES) parameters.push(p[param])
    }
    const { rows } = await db.executeQuery<FinalizedRow>(CompiledQuery.raw(finalizeSql(now.length), parameters))
    const byId = new Map(rows.map((row) => [row.id, row]))
    for (const { item, index } of now) results[index] = byId.get(item.episodeId)
    round = later
  }
  return results
}

/**
 * Applies a finalize. Throws not_found for an unknown or foreign episode and
 * conflict for an archived one (in which case nothing changed). `apply`
 * writes it (default: one statement now; the ingest writer batches).
 */
export async function finalizeEpisode(
  db: Kysely<Database>,
  clientId: string,
  episodeId: string,
  change: FinalizeChange,
  apply: (item: FinalizeItem) => Promise<FinalizedRow | undefined> = async (item) => (await applyFinalizes(db, [item]))[0],
): Promise<FinalizeEpisodeResult> {
  const row = await apply({ clientId, episodeId, change })
  if (row) return { episode_id: row.id, status: row.status as 'ready' | 'failed', updated_at: iso(row.updated_at) }

  const existing = await db
    .selectFrom('episodes')
    .select('status')
    .where('id', '=', episodeId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  if (existing?.status === 'archived') throw new EpisodicError('conflict', 'episode is archived and cannot be finalized')
  throw new EpisodicError('not_found', 'episode not found')
}

/** The caller's episode, or not_found. */
export async function getEpisode(db: Kysely<Database>, clientId: string, episodeId: string): Promise<Episode> {
  const row = await db
    .selectFrom('episodes')
    .selectAll()
    .where('id', '=', episodeId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  if (!row) throw new EpisodicError('not_found', 'episode not found')
  return toEpisode(row)
}

/** Row -> wire record. */
export function toEpisode(row: Selectable<EpisodesTable>): Episode {
  return {
    episode_id: row.id,
    client_id: row.client_id,
    name: row.name,
    display_name: row.name ?? `episode_${shortId(row.id)}`,
    source: row.source,
    robot: row.robot,
    policy_version: row.policy_version,
    env_version: row.env_version,
    git_sha: row.git_sha,
    seed: row.seed === null ? null : Number(row.seed),
    fps: row.fps,
    metadata: row.metadata,
    status: row.status,
    duration_s: row.duration_s,
    bytes_total: row.bytes_total === null ? null : Number(row.bytes_total),
    artifacts: row.artifacts as ArtifactKind[],
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  }
}

/** First 8 hex characters of a UUID: the short id used in names and CLI output. */
export function shortId(id: string): string {
  return id.slice(0, 8)
}

/** ISO 8601 UTC with milliseconds. */
export function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString()
}
