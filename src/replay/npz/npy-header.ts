import { npzError } from './errors.ts'

/** The fields of an `.npy` header plus where the element bytes start. */
export interface NpyHeader {
  /** numpy's dtype string, for example `'<f8'`. */
  descr: string
  /** True when the elements are stored in Fortran (column-major) order. */
  fortranOrder: boolean
  /** The array's dimensions. */
  shape: number[]
  /** Offset of the first element byte from the start of the `.npy` file. */
  dataOffset: number
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59] // "\x93NUMPY"

/**
 * Parses the header of an `.npy` file (format versions 1.0, 2.0 and 3.0).
 * `entry` only names the archive member in error messages.
 *
 * @example
 * parseNpyHeader(bytes, 'a.npy') // { descr: '<f8', fortranOrder: false, shape: [3, 4], dataOffset: 128 }
 */
export function parseNpyHeader(bytes: Uint8Array, entry: string): NpyHeader {
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) throw npzError(entry, 'not an .npy file (bad magic)')
  const major = bytes[6]
  if (major < 1 || major > 3) throw npzError(entry, `unsupported .npy format version ${major}.${bytes[7]}`)
  const lenBytes = major === 1 ? 2 : 4
  if (bytes.length < 8 + lenBytes) throw npzError(entry, 'truncated .npy header')
  let len = 0
  for (let i = lenBytes - 1; i >= 0; i--) len = len * 256 + bytes[8 + i]
  const start = 8 + lenBytes
  if (start + len > bytes.length) throw npzError(entry, 'truncated .npy header')
  const view = bytes.subarray(start, start + len)
  // Versions 1 and 2 are latin-1, 3 is UTF-8; numpy only ever writes ASCII keys and dtype codes here.
  const text = new TextDecoder().decode(view)
  return { ...parseDict(text, entry), dataOffset: start + len }
}

/** Reads the three keys of numpy's header dict literal without a Python parser. */
function parseDict(text: string, entry: string): Omit<NpyHeader, 'dataOffset'> {
  const descr = /['"]descr['"]\s*:\s*(['"])(.*?)\1/.exec(text)
  if (!descr) {
    const structured = /['"]descr['"]\s*:\s*\[/.test(text)
    throw npzError(entry, structured ? 'unsupported structured dtype' : `malformed .npy header ${JSON.stringify(text.trim())}`)
  }
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(text)
  const shape = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text)
  if (!fortran || !shape) throw npzError(entry, `malformed .npy header ${JSON.stringify(text.trim())}`)
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (!dims.every((d) => /^\d+L?$/.test(d))) throw npzError(entry, `malformed shape (${shape[1]})`)
  return { descr: descr[2], fortranOrder: fortran[1] === 'True', shape: dims.map((d) => parseInt(d, 10)) }
}

/**
 * Builds an `.npy` header exactly as numpy does: version 1.0 (2.0 when the
 * dict does not fit 65,535 bytes), padded with spaces and a newline so the
 * elements start on a 64-byte boundary.
 */
export function encodeNpyHeader(descr: string, shape: readonly number[], fortranOrder = false): Uint8Array {
  const tuple = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`
  const dict = `{'descr': '${descr}', 'fortran_order': ${fortranOrder ? 'True' : 'False'}, 'shape': ${tuple}, }`
  let prefix = 10
  let total = Math.ceil((prefix + dict.length + 1) / 64) * 64
  if (total - prefix > 0xffff) {
    prefix = 12
    total = Math.ceil((prefix + dict.length + 1) / 64) * 64
  }
  const out = new Uint8Array(total).fill(0x20)
  out.set(MAGIC)
  out[6] = prefix === 10 ? 1 : 2
  out[7] = 0
  const len = total - prefix
  for (let i = 0; i < prefix - 8; i++) out[8 + i] = (len / 256 ** i) & 0xff
  for (let i = 0; i < dict.length; i++) out[prefix + i] = dict.charCodeAt(i)
  out[total - 1] = 0x0a
  return out
}
