/**
 * Single byte ranges on the built-in store's GET (`Range: bytes=a-b`, `a-`,
 * `-n`), as S3 answers them: `206` with `Content-Range`, or `416` for a range
 * past the end. Browsers need this to seek in a `<video>` (without
 * `Accept-Ranges`, Chromium cannot move `currentTime`). Several ranges in one
 * header are answered with the whole object, which HTTP allows.
 */

/** The inclusive byte range a `Range` header asks of an object of `size` bytes; null for the whole object, 'unsatisfiable' past its end. */
export function parseRange(header: string | null, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null
  if (!m || (m[1] === '' && m[2] === '')) return null
  // No byte range of an empty object can be written in a Content-Range
  // (`bytes 0--1/0`); S3 and Ceph RGW answer 416 to any of them.
  if (size === 0) return 'unsatisfiable'
  if (m[1] === '') {
    const suffix = Number(m[2])
    if (suffix === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (start >= size || end < start) return 'unsatisfiable'
  return { start, end }
}

/** The bytes `[start, end]` of a stream, skipping what comes before and cancelling what comes after. */
export function sliceStream(body: ReadableStream<Uint8Array>, start: number, end: number): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  let offset = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return controller.close()
        const from = offset
        offset += value.byteLength
        if (offset <= start) continue
        const piece = value.subarray(Math.max(0, start - from), Math.min(value.byteLength, end + 1 - from))
        if (piece.byteLength) controller.enqueue(piece)
        if (offset > end) {
          await reader.cancel()
          return controller.close()
        }
        return
      }
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

/** S3's answer to a range past the end (its own code, outside the store's shared error list). */
export function rangeNotSatisfiable(size: number): Response {
  const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidRange</Code><Message>The requested range is not satisfiable</Message></Error>'
  return new Response(body, { status: 416, headers: { 'content-type': 'application/xml', 'content-range': `bytes */${size}` } })
}
