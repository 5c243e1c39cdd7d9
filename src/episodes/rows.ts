/**
 * Episode rows: the insert at open (and its undo), the caller-scoped read, and
 * the row-to-wire mapper. The finalize rule lives in `finalize.ts`.
 */
import type { Insertable, Kysely, Selectable } from 'kysely'
import { prepareRows } from '../db/prepared.ts'
import { iso } from '../clock.ts'
import { EpisodicError } from '../errors.ts'
import type { Database, EpisodesTable } from '../db/schema.ts'
import type { ArtifactKind } from '../storage/types.ts'
import type { Episode } from './ingest-schemas.ts'
import { jsonText, toInt64 } from '../http/json.ts'

export interface NewEpisode {
  id: string
  clientId: string
  name: string | null
  source: 'real' | 'sim' | 'replay'
  robot: string | null
  policyVersion: string | null
  envVersion: string | null
  gitSha: string | null
  seed: number | bigint | null
  fps: number | null
  metadata: Record<string, unknown>
  artifacts: ArtifactKind[]
  now: Date
}

/** Inserts a `recording` episode. */
export async function insertEpisode(db: Kysely<Database>, episode: NewEpisode): Promise<void> {
  await insertEpisodes(db, [episode])
}

const INSERT_FIELDS = [
  'id',
  'clientId',
  'name',
  'source',
  'robot',
  'policyVersion',
  'envVersion',
  'gitSha',
  'seed',
  'fps',
  'metadata',
  'artifacts',
  'now',
] as const
type InsertFields = (typeof INSERT_FIELDS)[number]

/** The INSERT of a batch, prepared once per row count (the open path's hot statement). */
const insertRows = prepareRows(INSERT_FIELDS, (db, rows) => db.insertInto('episodes').values(rows.map(toRow)))

/** Inserts `recording` episodes in one statement (see `db/batch.ts`). */
export async function insertEpisodes(db: Kysely<Database>, episodes: readonly NewEpisode[]): Promise<void> {
  await insertRows(db, episodes.map(toParams))
}

/** An episode's parameters as the database takes them: seed as int8 text (exact beyond 2^53), metadata as JSON text. */
const toParams = (e: NewEpisode): Record<InsertFields, unknown> => ({
  ...e,
  seed: e.seed === null ? null : BigInt(e.seed).toString(),
  metadata: jsonText(e.metadata),
})

/** The row an insert writes, from its parameters (values or `prepareRows`' stand-ins). */
const toRow = (p: Readonly<Record<InsertFields, unknown>>): Insertable<EpisodesTable> => ({
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
})

/**
 * Removes an episode that open inserted but could not hand out (its upload
 * URLs failed to sign). Only a `recording` row of that client is touched.
 */
export async function discardEpisode(db: Kysely<Database>, clientId: string, episodeId: string): Promise<void> {
  await db.deleteFrom('episodes').where('id', '=', episodeId).where('client_id', '=', clientId).where('status', '=', 'recording').execute()
}

/** The caller's episode, or undefined when it is unknown or another client's. */
export async function findEpisode(db: Kysely<Database>, clientId: string, episodeId: string): Promise<Episode | undefined> {
  const row = await db
    .selectFrom('episodes')
    .selectAll()
    .where('id', '=', episodeId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return row && toEpisode(row)
}

/** The caller's episode, or not_found. */
export async function getEpisode(db: Kysely<Database>, clientId: string, episodeId: string): Promise<Episode> {
  const episode = await findEpisode(db, clientId, episodeId)
  if (!episode) throw new EpisodicError('not_found', 'episode not found')
  return episode
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
    seed: row.seed === null ? null : toInt64(row.seed),
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
