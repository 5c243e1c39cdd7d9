import { deflateSync } from 'fflate'
import { crc32 } from './crc32.ts'
import { descrOf, dtypeInfo, dtypeOfArray } from './dtype.ts'
import { toFloat16Bits } from './float16.ts'
import { encodeNpyHeader } from './npy-header.ts'
import { type DType, type NdArrayLike, sizeOf, type TypedArray } from './types.ts'
import { writeZip, type ZipMember } from './zip-write.ts'

/** Options of `writeNpz`. */
export interface WriteNpzOptions {
  /** Deflate members like `np.savez_compressed` (level 6). Default false, like `np.savez`. */
  compress?: boolean
  /** Write zip64 records even when nothing needs them (numpy reads both). */
  zip64?: boolean
}

/**
 * Writes arrays as an `.npz` archive that `np.load` reads back with the same
 * keys, dtypes, shapes and values. Each key becomes member `<key>.npy`
 * (slashes kept), written little endian in C order. `float16` data is rounded
 * to half precision; `bool` data is stored as 0/1.
 *
 * @example
 * const bytes = writeNpz({
 *   '/joint_states/position': { shape: [3000, 7], data: positions }, // Float64Array
 *   '/gripper/closed': { dtype: 'bool', shape: [3000], data: closed },
 * }, { compress: true })
 */
export function writeNpz(arrays: Record<string, NdArrayLike>, options: WriteNpzOptions = {}): Uint8Array {
  const members: ZipMember[] = []
  for (const [key, value] of Object.entries(arrays)) {
    const arr = ArrayBuffer.isView(value) || Array.isArray(value) ? { data: value as Data } : (value as Exclude<NdArrayLike, Data>)
    const dtype = arr.dtype ?? inferDType(arr.data)
    const shape = [...(arr.shape ?? [arr.data.length])]
    if (!shape.every((d) => Number.isInteger(d) && d >= 0) || sizeOf(shape) !== arr.data.length) {
      throw new TypeError(`writeNpz: key ${JSON.stringify(key)}: shape [${shape.join(', ')}] does not fit ${arr.data.length} elements`)
    }
    const header = encodeNpyHeader(descrOf(dtype), shape)
    const payload = payloadBytes(dtype, arr.data)
    const crc = crc32(payload, crc32(header))
    const size = header.length + payload.length
    let parts = [header, payload]
    if (options.compress) {
      const npy = new Uint8Array(size)
      npy.set(header)
      npy.set(payload, header.length)
      parts = [deflateSync(npy, { level: 6 })]
    }
    members.push({ name: `${key}.npy`, method: options.compress ? 8 : 0, parts, crc32: crc, uncompressedSize: size })
  }
  return writeZip(members, options.zip64)
}

type Data = TypedArray | ArrayLike<number> | ArrayLike<bigint> | ArrayLike<boolean>

function inferDType(data: Data): DType {
  if (ArrayBuffer.isView(data)) return dtypeOfArray(data)
  const first = data.length > 0 ? data[0] : 0
  return typeof first === 'boolean' ? 'bool' : typeof first === 'bigint' ? 'int64' : 'float64'
}

/** Little-endian element bytes for `dtype`, converting (as typed array assignment does) only when needed. */
function payloadBytes(dtype: DType, data: Data): Uint8Array {
  let typed: TypedArray
  if (dtype === 'float16') {
    typed = new Uint16Array(data.length)
    for (let i = 0; i < data.length; i++) typed[i] = toFloat16Bits(Number(data[i]))
  } else if (dtype === 'bool') {
    typed = new Uint8Array(data.length)
    for (let i = 0; i < data.length; i++) typed[i] = data[i] ? 1 : 0
  } else {
    const { ctor } = dtypeInfo(dtype)
    if (data.constructor === ctor) {
      typed = data as TypedArray
    } else {
      typed = new ctor(data.length)
      const big = typed instanceof BigInt64Array || typed instanceof BigUint64Array
      for (let i = 0; i < data.length; i++) typed[i] = big ? BigInt(data[i]) : Number(data[i])
    }
  }
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength)
}
