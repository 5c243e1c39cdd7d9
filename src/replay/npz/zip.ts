import { npzError } from './errors.ts'

/** One member of a zip archive as its central directory describes it. */
export interface ZipEntry {
  name: string
  /** 0 = stored, 8 = deflated. */
  method: number
  crc32: number
  compressedSize: number
  uncompressedSize: number
  /** Offset of the member's local header from the start of the archive. */
  localOffset: number
}

const EOCD = 0x06054b50
const ZIP64_LOCATOR = 0x07064b50
const ZIP64_EOCD = 0x06064b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const U32 = 0xffffffff
const U16 = 0xffff

/** Reads a little-endian u64 that must fit a JavaScript number exactly. */
function u64(view: DataView, at: number): number {
  const hi = view.getUint32(at + 4, true)
  if (hi >= 0x200000) throw npzError(null, 'corrupt zip: 64-bit size or offset beyond 2^53')
  return hi * 0x100000000 + view.getUint32(at, true)
}

/**
 * Lists the members of a zip archive from its central directory, following
 * zip64 end records and zip64 extra fields (numpy forces zip64 on every
 * member it writes). Throws a clear `npz: corrupt zip ...` error when the
 * structure does not hold together.
 */
export function readZipDirectory(bytes: Uint8Array): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const eocd = findEocd(view)
  let count = view.getUint16(eocd + 10, true)
  let cdSize = view.getUint32(eocd + 12, true)
  let cdOffset = view.getUint32(eocd + 16, true)
  if (count === U16 || cdSize === U32 || cdOffset === U32) {
    const loc = eocd - 20
    if (loc < 0 || view.getUint32(loc, true) !== ZIP64_LOCATOR) throw npzError(null, 'corrupt zip: zip64 locator missing')
    const rec = u64(view, loc + 8)
    if (rec + 56 > bytes.length || view.getUint32(rec, true) !== ZIP64_EOCD) throw npzError(null, 'corrupt zip: zip64 end record missing')
    count = u64(view, rec + 32)
    cdSize = u64(view, rec + 40)
    cdOffset = u64(view, rec + 48)
  }
  if (cdOffset + cdSize > bytes.length) throw npzError(null, 'corrupt zip: central directory lies outside the file (truncated download?)')
  const entries: ZipEntry[] = []
  const decoder = new TextDecoder()
  let p = cdOffset
  for (let i = 0; i < count; i++) {
    if (p + 46 > bytes.length || view.getUint32(p, true) !== CENTRAL) throw npzError(null, `corrupt zip: bad central directory record ${i}`)
    const flags = view.getUint16(p + 8, true)
    const nameLen = view.getUint16(p + 28, true)
    const extraLen = view.getUint16(p + 30, true)
    const commentLen = view.getUint16(p + 32, true)
    const name = decoder.decode(bytes.subarray(p + 46, p + 46 + nameLen))
    if (flags & 1) throw npzError(name, 'encrypted zip members are not supported')
    const entry: ZipEntry = {
      name,
      method: view.getUint16(p + 10, true),
      crc32: view.getUint32(p + 16, true),
      compressedSize: view.getUint32(p + 20, true),
      uncompressedSize: view.getUint32(p + 24, true),
      localOffset: view.getUint32(p + 42, true),
    }
    applyZip64Extra(view, p + 46 + nameLen, extraLen, entry)
    entries.push(entry)
    p += 46 + nameLen + extraLen + commentLen
  }
  return entries
}

/** Scans back from the end for the end-of-central-directory record (it may be followed by a comment). */
function findEocd(view: DataView): number {
  const min = Math.max(0, view.byteLength - 22 - 0xffff)
  for (let p = view.byteLength - 22; p >= min; p--) {
    if (view.getUint32(p, true) === EOCD) return p
  }
  throw npzError(null, 'corrupt zip: end of central directory not found (not a zip file, or truncated)')
}

/** Replaces 0xFFFFFFFF placeholders with the values of the zip64 extra field (id 0x0001). */
function applyZip64Extra(view: DataView, start: number, len: number, e: ZipEntry): void {
  const end = start + len
  for (let p = start; p + 4 <= end;) {
    const id = view.getUint16(p, true)
    const size = view.getUint16(p + 2, true)
    if (id === 1) {
      let q = p + 4
      const take = (): number => {
        if (q + 8 > p + 4 + size) throw npzError(e.name, 'corrupt zip: short zip64 extra field')
        const v = u64(view, q)
        q += 8
        return v
      }
      if (e.uncompressedSize === U32) e.uncompressedSize = take()
      if (e.compressedSize === U32) e.compressedSize = take()
      if (e.localOffset === U32) e.localOffset = take()
      return
    }
    p += 4 + size
  }
}

/**
 * The member's bytes as they sit in the archive (still compressed when
 * deflated), located through its local header. Zero-copy subarray.
 */
export function entryBytes(bytes: Uint8Array, e: ZipEntry): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const p = e.localOffset
  if (p + 30 > bytes.length || view.getUint32(p, true) !== LOCAL) throw npzError(e.name, 'corrupt zip: bad local header')
  const start = p + 30 + view.getUint16(p + 26, true) + view.getUint16(p + 28, true)
  if (start + e.compressedSize > bytes.length) throw npzError(e.name, 'truncated data: member runs past the end of the archive')
  return bytes.subarray(start, start + e.compressedSize)
}
