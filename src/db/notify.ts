/**
 * Key revocation across instances: `revokeKey` sends `NOTIFY
 * episodic_key_revoked, '<key_id>'` in the same database, and every server on
 * PostgreSQL listens so its API-key cache drops the key at once. The cache TTL
 * bounds the delay where no listener runs (a lost connection, Workers).
 */
import postgres from 'postgres'

export const REVOCATION_CHANNEL = 'episodic_key_revoked'

/** Listens for revocations on a PostgreSQL URL; returns a function that stops listening. */
export async function listenForRevocations(url: string, onRevoke: (keyId: string) => void): Promise<() => Promise<void>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  await sql.listen(REVOCATION_CHANNEL, (keyId) => onRevoke(keyId))
  return () => sql.end({ timeout: 1 })
}
