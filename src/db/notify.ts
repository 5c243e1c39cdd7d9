/**
 * Key revocation across instances on PostgreSQL: `revokeKey` sends `NOTIFY
 * episodic_key_revoked, '<key_id>'` in the same database, and an app given
 * `postgresRevocations(url)` as its `revocations` option LISTENs, so its
 * API-key cache drops the key at once. The cache TTL bounds the delay where
 * no listener runs (a lost connection, Workers).
 *
 * @example
 * const app = createApp({ db, authCacheMs: 5000, revocations: postgresRevocations(url) })
 * await app.ready
 */
import postgres from 'postgres'
import type { RevocationFeed } from '../auth/revocations.ts'

export const REVOCATION_CHANNEL = 'episodic_key_revoked'

/** Revocations heard by LISTEN on a PostgreSQL URL (one connection of its own, re-listening after reconnects). */
export function postgresRevocations(url: string): RevocationFeed {
  return {
    async listen(onRevoke) {
      const sql = postgres(url, { max: 1, onnotice: () => {} })
      try {
        await sql.listen(REVOCATION_CHANNEL, (keyId) => onRevoke(keyId))
      } catch (error) {
        await sql.end({ timeout: 0 })
        throw error
      }
      return () => sql.end({ timeout: 1 })
    },
  }
}
