/**
 * Download buffers recycled between episodes. A fresh multi-megabyte buffer
 * per artifact costs its page faults as the bytes land and a garbage
 * collection later; `runAgainst` takes each baseline's download buffers here
 * and gives them back once that episode is replayed (its observations are
 * valid only during their episode), so a long run reuses a handful.
 */
export class BufferPool {
  readonly #free: ArrayBuffer[] = []
  readonly #issued = new WeakSet<ArrayBuffer>()
  readonly #maxFreeBytes: number
  #freeBytes = 0

  /** Keeps at most `maxFreeBytes` of returned buffers for reuse (more are left to the garbage collector). */
  constructor(maxFreeBytes: number) {
    this.#maxFreeBytes = maxFreeBytes
  }

  /**
   * A buffer of exactly `length` bytes: a view of the smallest free buffer
   * that holds it (and is at most twice its size), else a new one. Its
   * contents are whatever was there: the caller overwrites all of it.
   */
  take(length: number): Uint8Array {
    let best = -1
    for (let i = 0; i < this.#free.length; i++) {
      const size = this.#free[i]!.byteLength
      if (size >= length && size <= 2 * length + 65536 && (best < 0 || size < this.#free[best]!.byteLength)) best = i
    }
    if (best < 0) {
      const buffer = new ArrayBuffer(length)
      this.#issued.add(buffer)
      return new Uint8Array(buffer)
    }
    const [buffer] = this.#free.splice(best, 1) as [ArrayBuffer]
    this.#freeBytes -= buffer.byteLength
    return new Uint8Array(buffer, 0, length)
  }

  /** Returns a buffer `take` gave out, once nothing reads it any more; other buffers are ignored. */
  release(view: Uint8Array): void {
    const buffer = view.buffer as ArrayBuffer
    if (!this.#issued.has(buffer) || this.#free.includes(buffer)) return
    if (this.#freeBytes + buffer.byteLength > this.#maxFreeBytes) return
    this.#free.push(buffer)
    this.#freeBytes += buffer.byteLength
  }
}
