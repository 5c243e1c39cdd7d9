/**
 * Where an app hears that an API key was revoked by another process, so a
 * cached key stops working at once rather than when its cache entry expires
 * (`authCacheMs`). Any runtime can supply one: `postgresRevocations(url)`
 * (LISTEN/NOTIFY) is the one the Node, Bun and Deno adapters pass on
 * PostgreSQL; a message bus or a control socket fits the same shape.
 *
 * @example
 * const feed: RevocationFeed = { async listen(onRevoke) { bus.on('revoked', onRevoke); return async () => bus.off('revoked', onRevoke) } }
 * const app = createApp({ db, authCacheMs: 5000, revocations: feed })
 */
export interface RevocationFeed {
  /** Starts calling `onRevoke(keyId)` for each revocation; resolves with a function that stops it. */
  listen(onRevoke: (keyId: string) => void): Promise<() => Promise<void>>
}
