/** One member to write: its bytes as they go into the archive (maybe deflated). */
export interface ZipMember {
  name: string
  /** 0 = stored, 8 = deflated. */
  method: 0 | 8
  /** The member's bytes in the archive, written back to back. */
  parts: Uint8Array[]
  crc32: number
  uncompressedSize: number
}

const U32 = 0xffffffff
const DOS_DATE_1980 = 0x21 // 1980-01-01, fixed so identical arrays give identical archives

/**
 * Assembles a zip archive in one allocation. zip64 records are used when a
 * size, an offset or the member count needs them, or everywhere with
 * `forceZip64` (which the tests use to exercise the reader's zip64 path).
 */
export function writeZip(members: ZipMember[], forceZip64 = false): Uint8Array {
  const enc = new TextEncoder()
  const names = members.map((m) => enc.encode(m.name))
  const sizes = members.map((m) => m.parts.reduce((n, p) => n + p.length, 0))
  const z64 = members.map((m, i) => forceZip64 || sizes[i] >= U32 || m.uncompressedSize >= U32)
  let local = 0
  const offsets = members.map((_, i) => {
    const at = local
    local += 30 + names[i].length + (z64[i] ? 20 : 0) + sizes[i]
    return at
  })
  // An offset past 4 GiB also needs the zip64 field, but only in the central record.
  const c64 = offsets.map((o, i) => z64[i] || o >= U32)
  const central = names.reduce((n, name, i) => n + 46 + name.length + (c64[i] ? 28 : 0), 0)
  const end64 = forceZip64 || members.length >= 0xffff || local >= U32 || central >= U32
  const out = new Uint8Array(local + central + (end64 ? 76 : 0) + 22)
  const v = new DataView(out.buffer)
  const u64 = (at: number, x: number): void => {
    v.setUint32(at, x >>> 0, true)
    v.setUint32(at + 4, Math.floor(x / 0x100000000), true)
  }
  let p = 0
  members.forEach((m, i) => {
    p = header(v, p, 0x04034b50, m, names[i], z64[i], sizes[i])
    if (z64[i]) {
      v.setUint32(p, 0x00100001, true) // id 1, 16 bytes
      u64(p + 4, m.uncompressedSize)
      u64(p + 12, sizes[i])
      p += 20
    }
    for (const part of m.parts) {
      out.set(part, p)
      p += part.length
    }
  })
  members.forEach((m, i) => {
    p = header(v, p, 0x02014b50, m, names[i], c64[i], sizes[i], offsets[i])
    if (c64[i]) {
      v.setUint32(p, 0x00180001, true) // id 1, 24 bytes
      u64(p + 4, m.uncompressedSize)
      u64(p + 12, sizes[i])
      u64(p + 20, offsets[i])
      p += 28
    }
  })
  if (end64) {
    v.setUint32(p, 0x06064b50, true)
    u64(p + 4, 44)
    v.setUint16(p + 12, 45, true)
    v.setUint16(p + 14, 45, true)
    u64(p + 24, members.length)
    u64(p + 32, members.length)
    u64(p + 40, central)
    u64(p + 48, local)
    v.setUint32(p + 56, 0x07064b50, true)
    u64(p + 64, p)
    v.setUint32(p + 72, 1, true)
    p += 76
  }
  v.setUint32(p, 0x06054b50, true)
  v.setUint16(p + 8, end64 ? 0xffff : members.length, true)
  v.setUint16(p + 10, end64 ? 0xffff : members.length, true)
  v.setUint32(p + 12, end64 ? U32 : central, true)
  v.setUint32(p + 16, end64 ? U32 : local, true)
  return out
}

/** Writes a local (46-byte central when `offset` is given) header and the name; returns the next position. */
function header(v: DataView, p: number, sig: number, m: ZipMember, name: Uint8Array, z64: boolean, size: number, offset?: number): number {
  const central = offset !== undefined
  const q = central ? p + 2 : p // central records carry "version made by" first
  v.setUint32(p, sig, true)
  if (central) v.setUint16(p + 4, 45, true)
  v.setUint16(q + 4, z64 ? 45 : 20, true)
  v.setUint16(q + 6, 0x0800, true) // names are UTF-8
  v.setUint16(q + 8, m.method, true)
  v.setUint16(q + 12, DOS_DATE_1980, true)
  v.setUint32(q + 14, m.crc32, true)
  v.setUint32(q + 18, z64 ? U32 : size, true)
  v.setUint32(q + 22, z64 ? U32 : m.uncompressedSize, true)
  v.setUint16(q + 26, name.length, true)
  v.setUint16(q + 28, z64 ? (central ? 28 : 20) : 0, true)
  if (central) v.setUint32(p + 42, z64 ? U32 : offset, true)
  const start = central ? p + 46 : p + 30
  new Uint8Array(v.buffer).set(name, start)
  return start + name.length
}
