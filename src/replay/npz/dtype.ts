import type { DType, TypedArray } from './types.ts'

type ArrayCtor = { new (length: number): TypedArray; new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArray }

/**
 * One numpy dtype as stored in an `.npy` header: its name, bytes per element
 * in the file, and the typed array that holds it in memory. `float16` is the
 * one whose memory type (`Float32Array`) differs in width from the file.
 */
export interface DTypeInfo {
  name: DType
  itemsize: number
  /** Array type holding decoded elements. */
  ctor: ArrayCtor
  /** numpy type code without byte order, e.g. `f8`. */
  code: string
}

const TABLE: Record<string, DTypeInfo> = {}
function def(name: DType, code: string, ctor: ArrayCtor): void {
  TABLE[code] = { name, itemsize: Number(code.slice(1)), ctor, code }
}
def('bool', 'b1', Uint8Array)
def('int8', 'i1', Int8Array)
def('int16', 'i2', Int16Array)
def('int32', 'i4', Int32Array)
def('int64', 'i8', BigInt64Array)
def('uint8', 'u1', Uint8Array)
def('uint16', 'u2', Uint16Array)
def('uint32', 'u4', Uint32Array)
def('uint64', 'u8', BigUint64Array)
def('float16', 'f2', Float32Array)
def('float32', 'f4', Float32Array)
def('float64', 'f8', Float64Array)

const BY_NAME = new Map<DType, DTypeInfo>(Object.values(TABLE).map((d) => [d.name, d]))

/** A parsed `descr`: the dtype plus whether the file bytes are big endian. */
export interface ParsedDescr {
  dtype: DTypeInfo
  bigEndian: boolean
}

/**
 * Parses a numpy `descr` such as `<f8`, `>i4` or `|b1`. Returns a string
 * saying why when the dtype is not supported (complex, strings, datetimes,
 * structured records, longdouble), so the caller can name the entry.
 */
export function parseDescr(descr: string): ParsedDescr | string {
  const m = /^([<>|=]?)([a-zA-Z]\d+)$/.exec(descr)
  const info = m ? TABLE[m[2]] : undefined
  if (!m || !info) {
    const why = /^[<>|=]?c\d+$/.test(descr) ? ' (complex arrays are not supported)' : ''
    return `unsupported dtype '${descr}'${why}`
  }
  // '=' (native) never appears in files numpy writes; every JS runtime we target is little endian.
  return { dtype: info, bigEndian: m[1] === '>' }
}

/** The little-endian `descr` numpy writes for a dtype name, e.g. `<f8` or `|u1`. */
export function descrOf(name: DType): string {
  const info = dtypeInfo(name)
  return (info.itemsize === 1 ? '|' : '<') + info.code
}

/** Table entry for a dtype name; throws on names outside `DType`. */
export function dtypeInfo(name: DType): DTypeInfo {
  const info = BY_NAME.get(name)
  if (!info) throw new TypeError(`unknown dtype '${String(name)}'`)
  return info
}

/**
 * The dtype a typed array implies when none is given: `Uint8Array` is
 * `uint8` (say `bool` explicitly), `Float32Array` is `float32`.
 */
export function dtypeOfArray(data: TypedArray): DType {
  if (data instanceof Float64Array) return 'float64'
  if (data instanceof Float32Array) return 'float32'
  if (data instanceof Int8Array) return 'int8'
  if (data instanceof Int16Array) return 'int16'
  if (data instanceof Int32Array) return 'int32'
  if (data instanceof BigInt64Array) return 'int64'
  if (data instanceof Uint16Array) return 'uint16'
  if (data instanceof Uint32Array) return 'uint32'
  if (data instanceof BigUint64Array) return 'uint64'
  return 'uint8'
}
