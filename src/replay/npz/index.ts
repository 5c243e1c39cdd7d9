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
export { fflateInflate, createZlibInflate, type Inflate, type InflateRawSync } from './inflate.ts'
export { decodeNpy } from './npy.ts'
export { parseNpyHeader, encodeNpyHeader, type NpyHeader } from './npy-header.ts'
export { crc32, type Crc32 } from './crc32.ts'
