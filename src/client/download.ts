/**
 * Reads a download's body into one buffer sized from `Content-Length`, as the
 * chunks arrive: no list of chunks joined at the end, no growing copies (what
 * `arrayBuffer()` does on some runtimes), so a 2 MB artifact costs one 2 MB
 * allocation and one pass over its bytes. Without a usable length (chunked
 * encoding, a compressed response) it falls back to `arrayBuffer()`.
 */

/**
 * The whole body; throws when the stream ends before `Content-Length` bytes or
 * runs past them. With a known length the bytes land in `allocate(length)`
 * (default: a new buffer).
 */
export async function readSizedBody(response: Response, allocate: (length: number) => Uint8Array = (n) => new Uint8Array(n)): Promise<Uint8Array> {
  const declared = response.headers.get('content-length')
  const length = declared === null ? NaN : Number(declared)
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity'
  if (!response.body || encoded || !Number.isSafeInteger(length) || length < 0) return new Uint8Array(await response.arrayBuffer())
  const out = allocate(length)
  const reader = response.body.getReader()
  let filled = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (filled + value.length > length) {
      await reader.cancel()
      throw new Error(`body runs past its Content-Length of ${length} bytes`)
    }
    out.set(value, filled)
    filled += value.length
  }
  if (filled !== length) throw new Error(`body ended after ${filled} of ${length} bytes`)
  return out
}
