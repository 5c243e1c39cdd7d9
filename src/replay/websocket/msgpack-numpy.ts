/**
 * openpi's `msgpack_numpy` format (packages/openpi-client): msgpack where a
 * numpy array is a map `{b"__ndarray__": True, b"data": <bin>, b"dtype":
 * "<f4", b"shape": [..]}` and a numpy scalar `{b"__npgeneric__": True,
 * b"data": x, b"dtype": ".."}`. Those map keys are msgpack *bin* values
 * (Python bytes), which openpi's decoder requires and @msgpack/msgpack's
 * encoder cannot produce (it writes every map key as a string), so the
 * observation message is written here, directly and without copying arrays
 * twice; replies are decoded with @msgpack/msgpack.
 */
import { concatBytes } from '../../bytes.ts'
import { Decoder, Encoder } from '@msgpack/msgpack'
import { descrOf, parseDescr } from '../npz/dtype.ts'
import { toFloat16Bits } from '../npz/float16.ts'
import { decodeNpy, encodeNpyHeader, type NdArray } from '../npz/index.ts'

const utf8 = new TextEncoder()
// One encoder for every value (encode() would build a new one per call); its output is copied out.
const encoder = new Encoder()
const encode = (value: unknown): Uint8Array => encoder.encode(value).slice()
const TRUE = Uint8Array.of(0xc3)
// The four keys of openpi's array map, packed once as msgpack bin values.
const KEY = { ndarray: bin(utf8.encode('__ndarray__')), data: bin(utf8.encode('data')), dtype: bin(utf8.encode('dtype')), shape: bin(utf8.encode('shape')) }

/**
 * Packs a flat observation (string keys; `NdArray` values become openpi
 * arrays, anything else goes through @msgpack/msgpack) into one message.
 *
 * @example
 * socket.send(packObservation({ 'observation/state': stepView(state, i), prompt: 'pick up the cup' }))
 */
export function packObservation(observation: Record<string, unknown>): Uint8Array {
  const parts: Uint8Array[] = [mapHeader(Object.keys(observation).length)]
  for (const [key, value] of Object.entries(observation)) {
    parts.push(str(key))
    if (isNdArray(value)) {
      const data = arrayBytes(value)
      parts.push(mapHeader(4), KEY.ndarray, TRUE, KEY.data, binHeader(data.length), data)
      parts.push(KEY.dtype, str(descrOf(value.dtype)), KEY.shape, shapeArray(value.shape))
    } else {
      parts.push(encode(value))
    }
  }
  return concatBytes(parts)
}

// Map keys arrive as strings or (for openpi's bytes keys) binary; both become strings here.
const decoder = new Decoder({ mapKeyConverter: (key) => (key instanceof Uint8Array ? new TextDecoder().decode(key) : (key as string | number)) })

/** Decodes a reply: openpi arrays become `NdArray`s (own, aligned memory), numpy scalars numbers. */
export function unpackReply(message: Uint8Array): unknown {
  return revive(decoder.decode(message))
}

function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive)
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value
  const map = value as Record<string, unknown>
  if (map.__ndarray__ === true) return toNdArray(map)
  if (map.__npgeneric__ === true) return map.data
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(map)) out[key] = revive(item)
  return out
}

function toNdArray(map: Record<string, unknown>): NdArray {
  const { data, dtype, shape } = map
  if (!(data instanceof Uint8Array) || typeof dtype !== 'string' || !Array.isArray(shape)) {
    throw new TypeError('policy server sent a malformed __ndarray__ (needs bin data, str dtype, shape list)')
  }
  const parsed = parseDescr(dtype)
  if (typeof parsed === 'string') throw new TypeError(`policy server sent an array with ${parsed}`)
  // Through the .npy decoder so byte order, float16 and alignment are handled once, in one place.
  const header = encodeNpyHeader(dtype, shape as number[])
  const npy = new Uint8Array(header.length + data.length)
  npy.set(header)
  npy.set(data, header.length)
  return decodeNpy(npy, 'policy server reply', 'owned')
}

/** An `NdArray` (dtype, shape and a typed array), as opposed to any other value. */
export function isNdArray(value: unknown): value is NdArray {
  return typeof value === 'object' && value !== null && 'dtype' in value && 'shape' in value && ArrayBuffer.isView((value as NdArray).data)
}

function arrayBytes(array: NdArray): Uint8Array {
  const { data } = array
  if (array.dtype !== 'float16') return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  const half = new Uint16Array(data.length)
  for (let i = 0; i < data.length; i++) half[i] = toFloat16Bits(data[i] as number)
  return new Uint8Array(half.buffer)
}

/** A msgpack array of non-negative integers (uint32 each), without an Encoder per call. */
function shapeArray(shape: readonly number[]): Uint8Array {
  const out = new Uint8Array(3 + shape.length * 5)
  const view = new DataView(out.buffer)
  let at = 0
  if (shape.length < 16) out[at++] = 0x90 | shape.length
  else {
    out[at++] = 0xdc
    view.setUint16(at, shape.length)
    at += 2
  }
  for (const d of shape) {
    out[at++] = 0xce
    view.setUint32(at, d)
    at += 4
  }
  return out.subarray(0, at)
}

function mapHeader(n: number): Uint8Array {
  if (n < 16) return Uint8Array.of(0x80 | n)
  if (n < 0x10000) return Uint8Array.of(0xde, n >> 8, n & 0xff)
  return Uint8Array.of(0xdf, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)
}

function binHeader(n: number): Uint8Array {
  if (n < 0x100) return Uint8Array.of(0xc4, n)
  if (n < 0x10000) return Uint8Array.of(0xc5, n >> 8, n & 0xff)
  return Uint8Array.of(0xc6, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)
}

function bin(bytes: Uint8Array): Uint8Array {
  const head = binHeader(bytes.length)
  const out = new Uint8Array(head.length + bytes.length)
  out.set(head)
  out.set(bytes, head.length)
  return out
}

const strings = new Map<string, Uint8Array>()

/** A msgpack str (cached: the same keys and dtypes repeat every step). */
function str(text: string): Uint8Array {
  let packed = strings.get(text)
  if (!packed) {
    packed = encode(text)
    if (strings.size < 4096) strings.set(text, packed)
  }
  return packed
}
