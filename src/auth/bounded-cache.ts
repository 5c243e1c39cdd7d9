/**
 * A fixed-size map that forgets its least recently used entry when full: the
 * negative key cache uses it so that a flood of random key ids keeps memory
 * bounded (a Map keeps insertion order; a hit moves the entry to the end).
 *
 * @example
 * const misses = new BoundedCache<number>(10_000)
 * misses.set('abc', Date.now() + 5000)
 */
export class BoundedCache<V> {
  readonly #entries = new Map<string, V>()

  constructor(readonly capacity: number) {}

  get(key: string): V | undefined {
    const value = this.#entries.get(key)
    if (value !== undefined) {
      this.#entries.delete(key)
      this.#entries.set(key, value)
    }
    return value
  }

  set(key: string, value: V): void {
    this.#entries.delete(key)
    this.#entries.set(key, value)
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value!)
  }

  delete(key: string): void {
    this.#entries.delete(key)
  }

  get size(): number {
    return this.#entries.size
  }
}
