/**
 * S3's limits and multipart rules, in one place, so the built-in store
 * refuses exactly what S3 and R2 refuse (a single PUT over 5 GiB, a part
 * under 5 MiB that is not the last, parts out of order, a part that was never
 * uploaded) and the API plans uploads S3 will accept.
 */
import { md5 } from '@noble/hashes/legacy.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { concatBytes } from '../bytes.ts'
import { toHex } from '../crypto.ts'
import { type CompletedPart, StorageError, type StoredPart } from './types.ts'

const MiB = 1024 * 1024
const GiB = 1024 * MiB

/** Largest single PUT S3 and R2 accept: 5 GiB. */
export const MAX_SINGLE_PUT = 5 * GiB
/** Smallest part that is not the last: 5 MiB. */
export const MIN_PART_SIZE = 5 * MiB
/** Largest part: 5 GiB. */
export const MAX_PART_SIZE = 5 * GiB
/** Most parts in one upload. */
export const MAX_PARTS = 10_000
/** Largest object: 5 TiB. */
export const MAX_OBJECT_SIZE = 5 * 1024 * GiB
/** Part size the API plans with when the client names none: 64 MiB (see {@link defaultPartSize}). */
export const DEFAULT_PART_SIZE = 64 * MiB

/**
 * The part size for an object of `size` bytes when the client names none:
 * 64 MiB, or the fewest whole MiB that keep it within 10,000 parts (past
 * 625 GiB; 525 MiB for 5 TiB), as the AWS CLI scales its parts.
 */
export function defaultPartSize(size: number): number {
  return Math.max(DEFAULT_PART_SIZE, Math.ceil(size / MAX_PARTS / MiB) * MiB)
}

/** Number of parts an object of `size` bytes takes at `partSize` (at least one: S3 needs a part). */
export function partCount(size: number, partSize: number): number {
  return Math.max(1, Math.ceil(size / partSize))
}

/** `"abc"` and `abc` are the same ETag: S3 quotes them, clients may not. */
export function unquote(etag: string): string {
  return etag.trim().replace(/^"(.*)"$/, '$1')
}

/**
 * Checks a CompleteMultipartUpload list against the stored parts as S3 does:
 * ascending part numbers (`InvalidPartOrder`), every part stored with that
 * ETag (`InvalidPart`), every part but the last at least 5 MiB
 * (`EntityTooSmall`). Returns the stored parts in order.
 */
export function checkCompletion(requested: CompletedPart[], stored: StoredPart[]): StoredPart[] {
  if (requested.length === 0) throw new StorageError('MalformedXML', 400, 'You must specify at least one part.')
  const byNumber = new Map(stored.map((part) => [part.partNumber, part]))
  const chosen: StoredPart[] = []
  for (let i = 0; i < requested.length; i++) {
    const { partNumber, etag } = requested[i]!
    if (i > 0 && partNumber <= requested[i - 1]!.partNumber) {
      throw new StorageError('InvalidPartOrder', 400, 'The list of parts was not in ascending order. The parts list must be specified in order by part number.')
    }
    const part = byNumber.get(partNumber)
    if (!part || unquote(part.etag) !== unquote(etag)) {
      throw new StorageError('InvalidPart', 400, `Part ${partNumber} could not be found, or its ETag does not match.`)
    }
    chosen.push(part)
  }
  for (const part of chosen.slice(0, -1)) {
    if (part.size < MIN_PART_SIZE) {
      throw new StorageError(
        'EntityTooSmall',
        400,
        `Part ${part.partNumber} is ${part.size} bytes; every part but the last must be at least ${MIN_PART_SIZE} bytes.`,
      )
    }
  }
  return chosen
}

/**
 * The ETag of an object joined from `parts`, as S3 computes it: the MD5 of
 * the parts' MD5s (as bytes, in order), then `-<count>`, so a client can
 * check a multipart upload against its own parts. (WebCrypto has no MD5:
 * @noble/hashes gives it. A part ETag that is not an MD5, which no store here
 * mints, counts as its text.)
 */
export function multipartEtag(parts: StoredPart[]): string {
  const encoder = new TextEncoder()
  const digests = parts.map((part) => {
    const tag = unquote(part.etag)
    return /^[0-9a-f]{32}$/i.test(tag) ? hexToBytes(tag) : encoder.encode(tag)
  })
  return `${toHex(md5(concatBytes(digests)))}-${parts.length}`
}
