/**
 * How the ingest routes write episodes: one statement per request, or, when
 * the runtime gives a `defer` (see `db/batch.ts`), the opens and finalizes of
 * one event-loop turn coalesced into one INSERT and one UPDATE.
 */
import type { Kysely } from 'kysely'
import { batched, type Defer } from '../db/batch.ts'
import type { Database } from '../db/schema.ts'
import { applyFinalizes, type FinalizeChange, finalizeEpisode, type FinalizeItem } from './finalize.ts'
import { discardEpisode, insertEpisode, insertEpisodes, type NewEpisode } from './rows.ts'
import type { FinalizeEpisodeResult } from './ingest-schemas.ts'

export interface EpisodeWriter {
  /** Inserts a `recording` episode. */
  insert(episode: NewEpisode): Promise<void>
  /** Applies a finalize (not_found / conflict as `finalizeEpisode` says). */
  finalize(clientId: string, episodeId: string, change: FinalizeChange): Promise<FinalizeEpisodeResult>
  /** Deletes a `recording` episode open could not complete (rare: never batched). */
  discard(clientId: string, episodeId: string): Promise<void>
}

/** The writer over `db`; batched when `defer` is given. */
export function createEpisodeWriter(db: Kysely<Database>, defer?: Defer): EpisodeWriter {
  const discard = (clientId: string, episodeId: string) => discardEpisode(db, clientId, episodeId)
  if (!defer) {
    return {
      insert: (episode) => insertEpisode(db, episode),
      finalize: (clientId, episodeId, change) => finalizeEpisode(db, clientId, episodeId, change),
      discard,
    }
  }
  const insert = batched({ defer, run: async (episodes: NewEpisode[]) => (await insertEpisodes(db, episodes), episodes.map(() => undefined)) })
  const apply = batched({ defer, run: (items: FinalizeItem[]) => applyFinalizes(db, items) })
  return {
    insert,
    finalize: (clientId, episodeId, change) => finalizeEpisode(db, clientId, episodeId, change, apply),
    discard,
  }
}
