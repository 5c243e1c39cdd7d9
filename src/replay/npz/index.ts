/**
 * NPY/NPZ support for the replay harness: read the `actions.npz` and
 * `sensors.npz` artifacts numpy writes, write archives numpy reads, and walk
 * episodes step by step without copying. No `node:` imports: inflaters come in
 * as a capability (`createZlibInflate(zlib.inflateRawSync)` on Node, Deno, Bun).
 */
export type { DType, NdArray, NdArrayLike, TypedArray } from './types.ts'
export { sizeOf } from './types.ts'
export { readNpz, type ReadNpzOptions } from './read.ts'
export { writeNpz, type WriteNpzOptions } from './write.ts'
export { stepView } from './step.ts'
export { createZlibInflate, fflateInflate, type Inflate, type InflateRawSync } from './inflate.ts'
export { decodeNpy, type NpyBytes } from './npy.ts'
export { encodeNpyHeader, type NpyHeader, parseNpyHeader } from './npy-header.ts'
export { type Crc32, crc32 } from './crc32.ts'
export { NpzError } from './errors.ts'
