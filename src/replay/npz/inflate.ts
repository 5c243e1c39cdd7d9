import { inflateSync } from 'fflate'

/**
 * Decompresses one raw-deflate zip member. `uncompressedSize` comes from the
 * zip directory, so an implementation can allocate its output once. The
 * reader checks that the result has exactly that length.
 *
 * Ownership: the returned bytes belong to the reader from then on; it may
 * keep zero-copy views of them in the arrays it returns.
 */
export type Inflate = (compressed: Uint8Array, uncompressedSize: number) => Uint8Array

/**
 * Pure-JavaScript inflater (fflate) that writes straight into one buffer
 * sized from the directory. It runs everywhere, including Workers. One spare
 * byte lets the reader notice a member that inflates to more than declared
 * (fflate silently stops at the end of a caller's buffer).
 */
export const fflateInflate: Inflate = (compressed: Uint8Array, uncompressedSize: number): Uint8Array =>
  inflateSync(compressed, { out: new Uint8Array(uncompressedSize + 1) })

/** The subset of `node:zlib`'s `inflateRawSync` the zlib inflater uses (Deno and Bun have it too). */
export type InflateRawSync = (data: Uint8Array, options: { chunkSize?: number; maxOutputLength?: number; info?: false }) => Uint8Array

/** A member inflated to more bytes than the zip directory declares (it stopped there, one byte past). */
export class InflatedPastDeclared extends Error {
  /** Builds the error for a member declared as `declared` bytes. */
  constructor(readonly declared: number) {
    super(`inflated to more than the ${declared} bytes the directory declares`)
  }
}

/**
 * Wraps a `node:zlib`-style `inflateRawSync` (native zlib, faster than
 * fflate on large members) as an `Inflate`. The chunk size is set one byte
 * above the expected size so zlib fills a single output buffer and returns it
 * without a concatenating copy (and the spare byte exposes an oversized member).
 *
 * @example
 * // zlib: node's zlib module (Node, Deno and Bun all provide it)
 * const inflate = createZlibInflate(zlib.inflateRawSync)
 * const arrays = readNpz(bytes, { inflate })
 */
export function createZlibInflate(inflateRawSync: InflateRawSync): Inflate {
  return (compressed, uncompressedSize) => {
    try {
      // zlib stops one byte past the declared size: a member that lies about its size
      // (a 1 MB archive inflating to gigabytes) never takes more memory than it declared.
      return inflateRawSync(compressed, { chunkSize: Math.max(64, uncompressedSize + 1), maxOutputLength: uncompressedSize + 1 })
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new InflatedPastDeclared(uncompressedSize)
      throw error
    }
  }
}
