/**
 * The binary frames between episodic and its Python bridge
 * (`episodic_bridge.py` documents the layout; the two must agree). Arrays
 * travel as `.npy` files, each padded to start on a 64-byte boundary of the
 * frame body so numpy views them aligned, without a copy or a JSON detour.
 */
import { descrOf } from '../npz/dtype.ts'
import { toFloat16Bits } from '../npz/float16.ts'
import { decodeNpy, encodeNpyHeader, type NdArray } from '../npz/index.ts'

export const KIND = { load: 0x4c, reset: 0x52, step: 0x53, ok: 0x4b, action: 0x41, error: 0x45 } as const

const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()
const pad64 = (n: number) => (n + 63) & ~63

/** A frame whose body is `kind` and UTF-8 JSON (load, reset). */
export function jsonFrame(kind: number, value: unknown): Uint8Array {
  const text = utf8.encode(JSON.stringify(value))
  const frame = new Uint8Array(5 + text.length)
  new DataView(frame.buffer).setUint32(0, 1 + text.length, true)
  frame[4] = kind
  frame.set(text, 5)
  return frame
}

/**
 * Builds `S` frames. `.npy` headers are cached per dtype and shape: every step
 * of a stream has the same one, so a step costs one allocation and a copy of
 * its bytes.
 */
export class StepEncoder {
  readonly #headers = new Map<string, Uint8Array>()
  readonly #keys = new Map<string, Uint8Array>()

  encode(episodeIndex: number, step: number, observation: Record<string, NdArray>): Uint8Array {
    const names = Object.keys(observation)
    const parts: { key: Uint8Array; header: Uint8Array; bytes: Uint8Array; at: number }[] = []
    let size = 11 // kind, u32 episode, u32 step, u16 count (offsets from the body start)
    for (const name of names) {
      const array = observation[name]!
      const key = this.#key(name)
      const header = this.#header(array)
      const bytes = payload(array)
      const at = pad64(size + 6 + key.length)
      parts.push({ key, header, bytes, at })
      size = at + header.length + bytes.length
    }
    const frame = new Uint8Array(4 + size)
    const view = new DataView(frame.buffer)
    view.setUint32(0, size, true)
    frame[4] = KIND.step
    view.setUint32(5, episodeIndex, true)
    view.setUint32(9, step, true)
    view.setUint16(13, parts.length, true)
    let at = 11
    for (const part of parts) {
      view.setUint16(4 + at, part.key.length, true)
      frame.set(part.key, 4 + at + 2)
      view.setUint32(4 + at + 2 + part.key.length, part.header.length + part.bytes.length, true)
      frame.set(part.header, 4 + part.at)
      frame.set(part.bytes, 4 + part.at + part.header.length)
      at = part.at + part.header.length + part.bytes.length
    }
    return frame
  }

  #key(name: string): Uint8Array {
    let key = this.#keys.get(name)
    if (!key) this.#keys.set(name, key = utf8.encode(name))
    if (key.length > 0xffff) throw new RangeError(`observation key is longer than 65,535 bytes: ${name.slice(0, 40)}...`)
    return key
  }

  #header(array: NdArray): Uint8Array {
    const id = `${array.dtype}:${array.shape.join(',')}`
    let header = this.#headers.get(id)
    if (!header) this.#headers.set(id, header = encodeNpyHeader(descrOf(array.dtype), array.shape))
    return header
  }
}

/** The array's elements as little-endian bytes of its recorded dtype (float16 is held widened, so it is narrowed back). */
function payload(array: NdArray): Uint8Array {
  const { data } = array
  if (array.dtype !== 'float16') return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  const half = new Uint16Array(data.length)
  for (let i = 0; i < data.length; i++) half[i] = toFloat16Bits(data[i] as number)
  return new Uint8Array(half.buffer)
}

/** Decodes an `A` body (after the kind byte): `.npy` entries become `NdArray`s, JSON entries their values. */
export function decodeAction(body: Uint8Array): Record<string, unknown> {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const count = view.getUint16(1, true)
  const action: Record<string, unknown> = {}
  let at = 3
  for (let i = 0; i < count; i++) {
    const keyLength = view.getUint16(at, true)
    const key = fromUtf8.decode(body.subarray(at + 2, at + 2 + keyLength))
    const type = body[at + 2 + keyLength]
    const length = view.getUint32(at + 3 + keyLength, true)
    const start = pad64(at + 7 + keyLength)
    const bytes = body.subarray(start, start + length)
    action[key] = type === 0x6e ? decodeNpy(bytes, `action "${key}"`, 'owned') : JSON.parse(fromUtf8.decode(bytes))
    at = start + length
  }
  return action
}

/** The UTF-8 text of a `K` or `E` body. */
export function bodyText(body: Uint8Array): string {
  return fromUtf8.decode(body.subarray(1))
}
