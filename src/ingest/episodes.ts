/**
 * Episode rows: insert at open, the finalize rule, and the row-to-wire mapper.
 * Finalize is one UPDATE that merges metadata per key with `||`, so concurrent
 * finalizes never lose a key, and a `ready` episode keeps its status and its
 * `updated_at` (finalizing again returns the same payload).
 */
import { sql, type Kysely, type Selectable } from 'kysely'
import { EpisodicError } from '../errors.ts'
import { prepareQuery } from '../db/prepared.ts'
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

const insert = prepareQuery(
  ['id', 'clientId', 'name', 'source', 'robot', 'policyVersion', 'envVersion', 'gitSha', 'seed', 'fps', 'metadata', 'artifacts', 'now'],
  (db, p) =>
    db.insertInto('episodes').values({
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
      status: 'recording',
      artifacts: p.artifacts as ArtifactKind[],
      created_at: p.now as Date,
      updated_at: p.now as Date,
    }),
)

/** Inserts a `recording` episode (a prepared statement: the open path's hot query). */
export async function insertEpisode(db: Kysely<Database>, e: NewEpisode): Promise<void> {
  await insert(db, {
    ...e,
    seed: e.seed === null ? null : BigInt(e.seed).toString(),
    metadata: JSON.stringify(e.metadata),
  })
}

export interface FinalizeChange {
  status: 'ready' | 'failed'
  durationS?: number | null
  fps?: number | null
  bytesTotal?: number | null
  metadata?: Record<string, unknown>
  now: Date
}

/** The finalize rule as one prepared UPDATE (the finalize path's hot query). */
const finalize = prepareQuery(
  ['clientId', 'episodeId', 'status', 'durationS', 'fps', 'bytesTotal', 'metadata', 'now'],
  (db, p) => {
    const ready = sql<boolean>`status = 'ready'`
    return db
      .updateTable('episodes')
      .set({
        status: sql`case when ${ready} then 'ready' else ${p.status} end`,
        duration_s: sql`coalesce(${p.durationS}::float8, duration_s)`,
        fps: sql`coalesce(${p.fps}::float8, fps)`,
        bytes_total: sql`coalesce(${p.bytesTotal}::int8, bytes_total)`,
        metadata: sql`coalesce(metadata, '{}'::jsonb) || ${p.metadata}::jsonb`,
        updated_at: sql`case when ${ready} then updated_at else ${p.now}::timestamptz end`,
      })
      .where('id', '=', p.episodeId as string)
      .where('client_id', '=', p.clientId as string)
      .where('status', '<>', 'archived')
      .returning(['id', 'status', 'updated_at'])
  },
)

/**
 * Applies a finalize. Throws not_found for an unknown or foreign episode and
 * conflict for an archived one (in which case nothing changed).
 */
export async function finalizeEpisode(
  db: Kysely<Database>,
  clientId: string,
  episodeId: string,
  change: FinalizeChange,
): Promise<FinalizeEpisodeResult> {
  const { rows } = await finalize(db, {
    clientId,
    episodeId,
    status: change.status,
    durationS: change.durationS ?? null,
    fps: change.fps ?? null,
    bytesTotal: change.bytesTotal ?? null,
    metadata: JSON.stringify(change.metadata ?? {}),
    now: change.now,
  })
  const row = rows[0]
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
