/**
 * The binary frames between episodic and its Python bridge
 * (`episodic_bridge.py` documents the layout; the two must agree). Arrays
 * travel as `.npy` files, each padded to start on a 64-byte boundary of the
 * frame body so numpy views them aligned, without a copy or a JSON detour.
 */
import { concatBytes } from '../../bytes.ts'
import { jsonText } from '../../http/json.ts'
import { descrOf, dtypeInfo } from '../npz/dtype.ts'
import { toFloat16Bits } from '../npz/float16.ts'
import { decodeNpy, encodeNpyHeader, type NdArray, stepView } from '../npz/index.ts'
import { byteSwapInto } from '../npz/layout.ts'

export const KIND = { load: 0x4c, reset: 0x52, step: 0x53, play: 0x50, ok: 0x4b, action: 0x41, batch: 0x42, error: 0x45, failed: 0x46 } as const

const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()
const pad64 = (n: number) => (n + 63) & ~63

/** A frame whose body is `kind` and UTF-8 JSON (load, reset). */
export function jsonFrame(kind: number, value: unknown): Uint8Array {
  // jsonText: metadata may hold integers past 2^53 (bigints), which Python reads exactly.
  const text = utf8.encode(jsonText(value))
  const frame = new Uint8Array(5 + text.length)
  new DataView(frame.buffer).setUint32(0, 1 + text.length, true)
  frame[4] = kind
  frame.set(text, 5)
  return frame
}

/**
 * Builds `S` and `P` frames. `.npy` headers are cached per dtype and shape:
 * every step of a stream has the same one, so a step costs one allocation and
 * a copy of its bytes. A `P` frame is a list of chunks that views the
 * episode's arrays instead of copying them (written in one writev).
 */
export class StepEncoder {
  readonly #headers = new Map<string, Uint8Array>()
  readonly #keys = new Map<string, Uint8Array>()

  /** An `S` frame: one step's observation. */
  encode(episodeIndex: number, step: number, observation: Record<string, NdArray>): Uint8Array {
    return concatBytes(this.#chunks(KIND.step, episodeIndex, step, observation))
  }

  /** A `P` frame, as chunks: a whole episode's arrays, each cut to its first `steps` rows (0-d arrays whole). */
  encodeEpisode(episodeIndex: number, steps: number, observations: Record<string, NdArray>): Uint8Array[] {
    const rows: Record<string, NdArray> = {}
    for (const [name, array] of Object.entries(observations)) rows[name] = array.shape.length === 0 ? array : leadingRows(array, steps)
    return this.#chunks(KIND.play, episodeIndex, steps, rows)
  }

  /** The frame as chunks: each array's bytes as they are, and before each the bytes that lead up to them. */
  #chunks(kind: number, episodeIndex: number, step: number, observation: Record<string, NdArray>): Uint8Array[] {
    const names = Object.keys(observation)
    const parts: { key: Uint8Array; header: Uint8Array; bytes: Uint8Array; at: number }[] = []
    let size = 11 // kind, u32 episode, u32 step (or steps), u16 count (offsets from the body start)
    for (const name of names) {
      const array = observation[name]!
      const key = this.#key(name)
      const header = this.#header(array)
      const bytes = payload(array)
      const at = pad64(size + 6 + key.length)
      parts.push({ key, header, bytes, at })
      size = at + header.length + bytes.length
    }
    const chunks: Uint8Array[] = []
    let lead = new Uint8Array(4 + (parts[0] ? parts[0].at + parts[0].header.length : 11))
    let view = new DataView(lead.buffer)
    view.setUint32(0, size, true)
    lead[4] = kind
    view.setUint32(5, episodeIndex, true)
    view.setUint32(9, step, true)
    view.setUint16(13, parts.length, true)
    // `lead` covers body offsets [from, next data); `at` is the body offset of the next key.
    let from = -4
    let at = 11
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      view.setUint16(at - from, part.key.length, true)
      lead.set(part.key, at - from + 2)
      view.setUint32(at - from + 2 + part.key.length, part.header.length + part.bytes.length, true)
      lead.set(part.header, part.at - from)
      chunks.push(lead, part.bytes)
      from = part.at + part.header.length + part.bytes.length
      at = from
      const next = parts[i + 1]
      if (next) {
        lead = new Uint8Array(next.at + next.header.length - from)
        view = new DataView(lead.buffer)
      }
    }
    if (parts.length === 0) chunks.push(lead)
    return chunks
  }

  #key(name: string): Uint8Array {
    let key = this.#keys.get(name)
    if (!key) this.#keys.set(name, key = utf8.encode(name))
    if (key.length > 0xffff) throw new RangeError(`observation key is longer than 65,535 bytes: ${name.slice(0, 40)}...`)
    return key
  }

  #header(array: NdArray): Uint8Array {
    const big = bigEndian(array)
    const id = `${array.dtype}${big ? '>' : ''}:${array.shape.join(',')}`
    let header = this.#headers.get(id)
    if (!header) this.#headers.set(id, header = encodeNpyHeader(big ? `>${dtypeInfo(array.dtype).code}` : descrOf(array.dtype), array.shape))
    return header
  }
}

/**
 * An array the archive stored big-endian (`>f8`): the reader marks it (its
 * `data` is in native order, as JavaScript policies want it), and the bridge
 * sends it back in the recorded order, so numpy sees the dtype `np.load`
 * gives. Byte order means nothing for one-byte types.
 */
function bigEndian(array: NdArray): boolean {
  return array.bigEndian === true && array.data.BYTES_PER_ELEMENT > 1
}

/** The first `steps` rows of an array whose leading dimension counts steps, as a view. */
function leadingRows(array: NdArray, steps: number): NdArray {
  if (array.shape[0] === steps) return array
  const width = array.shape[0] === 0 ? 0 : array.data.length / array.shape[0]
  return { ...array, shape: [steps, ...array.shape.slice(1)], data: array.data.subarray(0, steps * width) }
}

/**
 * The array's elements as bytes of its recorded dtype (float16 is held
 * widened, so it is narrowed back): a view of `data` for the common
 * little-endian case, a swapped copy for an array recorded big-endian.
 */
function payload(array: NdArray): Uint8Array {
  const { data } = array
  let bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  if (array.dtype === 'float16') {
    const half = new Uint16Array(data.length)
    for (let i = 0; i < data.length; i++) half[i] = toFloat16Bits(data[i] as number)
    bytes = new Uint8Array(half.buffer)
  }
  if (!bigEndian(array)) return bytes
  const swapped = new Uint8Array(bytes.length)
  byteSwapInto(bytes, swapped, dtypeInfo(array.dtype).itemsize)
  return swapped
}

/**
 * Decodes an `A` body (after the kind byte): `.npy` entries become `NdArray`s,
 * JSON entries their values, and a value the bridge found not to be numbers a
 * `TypeError` saying so (the metrics raise it only for a key the baseline has;
 * other keys are ignored, as for a JavaScript policy).
 */
export function decodeAction(body: Uint8Array): Record<string, unknown> {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const action: Record<string, unknown> = {}
  for (const { key, kind, bytes } of entries(body, view, 3, view.getUint16(1, true))) {
    const value = kind === NPY
      ? decodeNpy(bytes, `action "${key}"`, 'owned')
      : kind === JSON_
      ? key === '_outcome' ? outcomeJson(bytes) : JSON.parse(fromUtf8.decode(bytes))
      : new TypeError(fromUtf8.decode(bytes))
    setOwn(action, key, value)
  }
  return action
}

const NPY = 0x6e // 'n'
const NONFINITE = new Map<unknown, number>([['nan', NaN], ['inf', Infinity], ['-inf', -Infinity]])

/**
 * `_outcome` JSON as the bridge writes it: a NaN or an infinity (which JSON
 * cannot spell) comes tagged `{"__nonfinite__": "nan"}` and becomes the number
 * again, so `candidateOutcome` rejects it as it does from a JavaScript policy.
 */
function outcomeJson(bytes: Uint8Array): unknown {
  return JSON.parse(fromUtf8.decode(bytes), (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
    const tag = (value as { __nonfinite__?: unknown }).__nonfinite__
    return NONFINITE.has(tag) && Object.keys(value).length === 1 ? NONFINITE.get(tag) : value
  })
}
const JSON_ = 0x6a // 'j'

/** `target[key] = value`, also for a key named `__proto__` (plain assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** The `count` entries of an `A` or `B` body from offset `at`: key, kind byte ('n', 'j' or 'x'), payload. */
function* entries(body: Uint8Array, view: DataView, at: number, count: number): Generator<{ key: string; kind: number; bytes: Uint8Array }> {
  for (let i = 0; i < count; i++) {
    const keyLength = view.getUint16(at, true)
    const key = fromUtf8.decode(body.subarray(at + 2, at + 2 + keyLength))
    const kind = body[at + 2 + keyLength]!
    const length = view.getUint32(at + 3 + keyLength, true)
    const start = pad64(at + 7 + keyLength)
    yield { key, kind, bytes: body.subarray(start, start + length) }
    at = start + length
  }
}

/**
 * Decodes a `B` body (the answer to a `P` frame) into one action per step.
 * Stacked arrays come back as per-step views of one array, JSON lists as
 * their per-step values; `_outcome` only on the steps that returned one.
 */
export function decodeBatch(body: Uint8Array, steps: number): Record<string, unknown>[] {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const count = view.getUint32(2, true)
  if (count !== steps) throw new Error(`the Python bridge answered ${count} steps for an episode of ${steps}`)
  const actions: Record<string, unknown>[] = Array.from({ length: steps }, () => ({}))
  if (body[1] === 1) {
    let at = 6
    for (let step = 0; step < steps; step++) {
      const length = view.getUint32(at, true)
      const start = pad64(at + 4)
      actions[step] = decodeAction(body.subarray(start, start + length))
      at = start + length
    }
    return actions
  }
  for (const { key, kind, bytes } of entries(body, view, 8, view.getUint16(6, true))) {
    if (kind === NPY) {
      const stacked = decodeNpy(bytes, `action "${key}"`, 'owned')
      for (let step = 0; step < steps; step++) setOwn(actions[step]!, key, stepView(stacked, step))
    } else if (key === '_outcome') {
      for (const [step, value] of outcomeJson(bytes) as [number, unknown][]) actions[step]!._outcome = value
    } else {
      const values = JSON.parse(fromUtf8.decode(bytes)) as unknown[]
      for (let step = 0; step < steps; step++) setOwn(actions[step]!, key, values[step])
    }
  }
  return actions
}

/** The UTF-8 text of a `K` or `E` body. */
export function bodyText(body: Uint8Array): string {
  return fromUtf8.decode(body.subarray(1))
}
