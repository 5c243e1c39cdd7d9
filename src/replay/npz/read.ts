import { type Crc32, crc32 } from './crc32.ts'
import { npzError } from './errors.ts'
import { fflateInflate, type Inflate, InflatedPastDeclared } from './inflate.ts'
import { decodeNpy } from './npy.ts'
import type { NdArray } from './types.ts'
import { entryBytes, readZipDirectory, type ZipEntry } from './zip.ts'

/** Options of `readNpz`. */
export interface ReadNpzOptions {
  /** Inflater for deflated members (`np.savez_compressed`). Default: `fflateInflate`. */
  inflate?: Inflate
  /**
   * Check each member's CRC-32 against the zip directory, as numpy's reader
   * (Python's zipfile) does: `true` with the built-in JavaScript CRC (~600
   * MB/s here), or a faster `Crc32` such as node:zlib's `crc32` (~4 GB/s;
   * Node 20.15+, Deno, Bun). A mismatch throws. Default false here; the
   * replay harness turns it on.
   */
  verifyCrc?: boolean | Crc32
  /** Decode only these keys; the others are not inflated or copied. */
  keys?: readonly string[]
  /**
   * The most bytes the deflated members may inflate to, all together,
   * checked against the zip directory before anything is inflated (default:
   * no limit): a small archive of zeros can declare gigabytes.
   */
  maxInflatedBytes?: number
  /**
   * The caller hands `bytes` over (a downloaded body, a file just read): stored
   * members are shifted into alignment inside it and returned as views, with
   * no new memory and no copy. `bytes` must not be read as an archive again.
   * Default false: `bytes` is left untouched and stored members are copied once.
   */
  inPlace?: boolean
}

/**
 * Reads a whole `.npz` archive (what `np.savez` / `np.savez_compressed` write)
 * into `{ [key]: NdArray }`. Keys are member names without `.npy`, slashes
 * kept: `np.savez(f, **{'/joint_states/position': a})` gives key
 * `/joint_states/position`. Members not ending in `.npy` are skipped.
 *
 * Stored members are copied once into aligned arrays (numpy leaves them
 * unaligned), or with `inPlace` aligned inside `bytes` itself; deflated
 * members are inflated into one buffer sized from the directory and viewed
 * without a further copy. Arrays are always C order, native byte order; see
 * `NdArray` for `order`, `bool` and `float16`.
 *
 * @example
 * const actions = readNpz(new Uint8Array(await res.arrayBuffer()), { inPlace: true })
 * actions['/joint_states/position'].shape // [3000, 7]
 */
export function readNpz(bytes: Uint8Array, options: ReadNpzOptions = {}): Record<string, NdArray> {
  const inflate = options.inflate ?? fflateInflate
  const wanted = options.keys ? new Set(options.keys) : null
  const check = options.verifyCrc === true ? crc32 : options.verifyCrc || undefined
  const out: Record<string, NdArray> = {}
  const entries = readZipDirectory(bytes).filter((entry) => entry.name.endsWith('.npy') && (!wanted || wanted.has(entry.name.slice(0, -4))))
  if (options.maxInflatedBytes !== undefined) {
    const inflated = entries.reduce((sum, entry) => sum + (entry.method === 0 ? 0 : entry.uncompressedSize), 0)
    if (inflated > options.maxInflatedBytes) {
      throw npzError(null, `its compressed members declare ${inflated} bytes of arrays, over the limit of ${options.maxInflatedBytes} (maxInflatedBytes)`)
    }
  }
  for (const entry of entries) {
    const key = entry.name.slice(0, -4)
    const { npy, owned } = memberBytes(bytes, entry, inflate)
    if (check !== undefined && check(npy) >>> 0 !== entry.crc32) throw npzError(entry.name, 'CRC-32 mismatch (corrupt archive)')
    const use = owned ? 'owned' : options.inPlace ? 'movable' : 'borrowed'
    // defineProperty so a key such as "__proto__" stays an ordinary own key.
    Object.defineProperty(out, key, { value: decodeNpy(npy, entry.name, use), enumerable: true, writable: true, configurable: true })
  }
  return out
}

/** The member's `.npy` bytes, and whether they are a fresh buffer the decoder may keep. */
function memberBytes(bytes: Uint8Array, entry: ZipEntry, inflate: Inflate): { npy: Uint8Array; owned: boolean } {
  const raw = entryBytes(bytes, entry)
  if (entry.method === 0) {
    if (entry.compressedSize !== entry.uncompressedSize) throw npzError(entry.name, 'corrupt zip: stored member with differing sizes')
    return { npy: raw, owned: false }
  }
  if (entry.method !== 8) throw npzError(entry.name, `unsupported zip compression method ${entry.method}`)
  // Deflate cannot expand more than ~1032:1; refuse a forged size before allocating for it.
  if (entry.uncompressedSize > entry.compressedSize * 1032 + 1024) {
    throw npzError(entry.name, `corrupt zip: ${entry.compressedSize} compressed bytes cannot inflate to the declared ${entry.uncompressedSize}`)
  }
  let npy: Uint8Array
  try {
    npy = inflate(raw, entry.uncompressedSize)
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    if (err instanceof InflatedPastDeclared) throw npzError(entry.name, `corrupt deflate data: ${message}`, err)
    // An output this runtime cannot allocate (past its largest buffer) is not corrupt data.
    if (err instanceof RangeError) throw npzError(entry.name, `cannot hold its ${entry.uncompressedSize} bytes in one buffer here (${message})`, err)
    throw npzError(entry.name, `corrupt deflate data (${message})`, err)
  }
  if (npy.length !== entry.uncompressedSize) {
    const got = npy.length > entry.uncompressedSize ? 'more than' : `only ${npy.length} of`
    throw npzError(entry.name, `corrupt deflate data: inflated to ${got} the ${entry.uncompressedSize} bytes the directory declares`)
  }
  return { npy, owned: true }
}
