/**
 * Bounded read-ahead for the replay loop: while episode i replays, the
 * artifacts of the next ones download, so the policy is not left waiting on
 * the network. Two bounds keep memory in check:
 *
 * - `bytes`: downloads stop being started ahead once the artifacts already
 *   fetched but not yet handed to a policy, plus an estimate for those in
 *   flight (the size of the last one fetched), reach it; until one download
 *   has finished there is no estimate, so nothing is read ahead while one is
 *   in flight (episodes larger than the budget never pile up);
 * - `episodes`: at most this many episodes are fetched ahead of the ones
 *   being replayed.
 *
 * An episode a worker needs now is always fetched, whatever the budget, so a
 * budget smaller than one episode means no read-ahead, never a stall.
 */

/** Read-ahead limits (see the module doc); `runAgainst`'s `prefetch` option. */
export interface PrefetchOptions {
  /** Bytes of downloaded, not yet replayed artifacts to hold at most (default 256 MiB). */
  bytes?: number
  /** Episodes fetched ahead of those replaying, at most (default 8). */
  episodes?: number
}

export const DEFAULT_PREFETCH: Required<PrefetchOptions> = { bytes: 256 * 1024 * 1024, episodes: 8 }

interface Slot<T> {
  promise: Promise<T>
  size: number | null
  taken: boolean
}

/**
 * Fetches items 0..total-1 in order through `load`, ahead of `take` within the
 * limits. `take(i)` must be called with increasing `i`.
 *
 * @example
 * const ahead = new Prefetcher((i) => download(ids[i]), (d) => d.bytes, ids.length, { bytes: 64 << 20 })
 * for (let i = 0; i < ids.length; i++) replay(await ahead.take(i))
 */
export class Prefetcher<T> {
  readonly #load: (index: number) => Promise<T>
  readonly #sizeOf: (item: T) => number
  readonly #total: number
  readonly #limits: Required<PrefetchOptions>
  readonly #slots = new Map<number, Slot<T>>()
  #started = 0
  #taken = 0
  #held = 0
  #inFlight = 0
  #estimate = 0
  #sized = false
  #stopped = false

  constructor(load: (index: number) => Promise<T>, sizeOf: (item: T) => number, total: number, limits: PrefetchOptions | false = {}) {
    this.#load = load
    this.#sizeOf = sizeOf
    this.#total = total
    this.#limits = limits === false ? { bytes: 0, episodes: 0 } : { ...DEFAULT_PREFETCH, ...limits }
  }

  /** Item `index`, fetched now if it was not yet; starts the read-ahead behind it. */
  take(index: number): Promise<T> {
    while (this.#started <= index) this.#start()
    const slot = this.#slots.get(index)
    if (!slot) throw new RangeError(`prefetch: item ${index} was already taken`)
    this.#slots.delete(index)
    slot.taken = true
    if (slot.size !== null) this.#held -= slot.size
    this.#taken = Math.max(this.#taken, index + 1)
    this.#fill()
    return slot.promise
  }

  /** Starts no more downloads (those in flight finish and are dropped). */
  stop(): void {
    this.#stopped = true
  }

  #fill(): void {
    const { bytes, episodes } = this.#limits
    while (!this.#stopped && this.#started < this.#total && this.#started - this.#taken < episodes && this.#withinBudget(bytes)) {
      this.#start()
    }
  }

  #withinBudget(bytes: number): boolean {
    // No size seen yet: one download at a time, until one tells how big episodes are.
    if (!this.#sized && this.#inFlight > 0) return false
    return this.#held + this.#inFlight * this.#estimate < bytes
  }

  #start(): void {
    const index = this.#started++
    const slot: Slot<T> = { promise: this.#load(index), size: null, taken: false }
    this.#inFlight++
    this.#slots.set(index, slot)
    slot.promise.then(
      (item) => {
        this.#inFlight--
        slot.size = this.#sizeOf(item)
        this.#estimate = slot.size
        this.#sized = true
        if (!slot.taken) this.#held += slot.size
        this.#fill()
      },
      // The taker sees the rejection; here it only must not count as unhandled.
      () => {
        this.#inFlight--
      },
    )
  }
}
