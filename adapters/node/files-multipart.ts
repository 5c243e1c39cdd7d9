/**
 * Multipart uploads of the disk `BlobFiles` (see files.ts). Each upload is a
 * folder `<dir>/.uploads/<id>/` holding `upload.json` (its key and the part
 * size planned at create) and, when that size is known, `data`: the object
 * being built, part N written straight into its slot at (N-1)·partSize.
 * Completing such an upload renames `data` into place: each byte is written
 * once, as in a single PUT.
 *
 * What is listed is what the folder's names say, and a name appears in one
 * step after its bytes are written, so a crash mid-part lists nothing of it:
 * - `<n>.<md5>.<size>`, empty: part n lies in its slot of `data`;
 * - `<n>.<md5>`: part n in a file of its own (written to a temporary file,
 *   then renamed), for a part that cannot go into its slot: no planned size,
 *   a length that overflows the slot, or a slot another write holds or a
 *   listed part fills (a re-sent part never overwrites the part it replaces
 *   before it has fully arrived). Completion copies such parts into their
 *   slots; parts that do not fit the layout at all (a gap in the numbers, a
 *   part of another size) are streamed into a new file instead.
 *
 * Writers of a slot exclude each other with a `.slot-<n>` file created
 * exclusively and holding their pid; completion first creates `.completing`,
 * after which no slot write starts, and takes the copying path if a slot
 * write is still running. A claim whose process died is ignored
 * (pid-claims.ts).
 *
 * A completion that dies after renaming `data` into place leaves the folder
 * without `data`; a retry takes over `.completing`, finds the object these
 * parts make already published, and only removes the folder.
 *
 * An upload nobody touched for `STALE_UPLOAD_MS` (7 days, R2's default
 * lifecycle rule) is aborted: at most once an hour, creating an upload sweeps
 * the folder of those, so a client that crashed and never came back does not
 * hold its parts' disk space for ever.
 */
import { randomUUID } from 'node:crypto'
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MAX_OBJECT_SIZE } from '../../src/storage/multipart-rules.ts'
import { type BlobMultipart, changedPart, noSuchUpload, StorageError, type StoredPart } from '../../src/storage/types.ts'
import { claim, heldByLiveProcess } from './pid-claims.ts'

/** What the multipart folder borrows from the disk files around it. */
export interface DiskParts {
  /** `<dir>/.uploads` */
  uploads: string
  writeStreamed(path: string, body: ReadableStream<Uint8Array>): Promise<{ etag: string; size: number }>
  /** Streams a body into an open file at `position`, refusing one longer than `limit`. */
  writeInto(handle: FileHandle, body: ReadableStream<Uint8Array>, position: number, limit: number): Promise<{ etag: string; size: number }>
  /** Moves a finished file into place as `key` with `etag`; returns its size. */
  publish(key: string, temp: string, etag: string): Promise<number>
  /** Size and ETag of the object at `key`, or null. */
  head(key: string): Promise<{ size: number; etag: string } | null>
  /** Throws for a key that may not map onto the folder. */
  pathsOf(key: string): unknown
}

const OWN_FILE = /^(\d{1,5})\.([0-9a-f]{32})$/
const IN_SLOT = /^(\d{1,5})\.([0-9a-f]{32})\.(\d{1,16})$/
const DATA = 'data'
const COMPLETING = '.completing'
const SLOT_CLAIM = /^\.slot-\d{1,5}$/
/** An unfinished upload untouched this long is aborted (R2 aborts them after 7 days by default). */
export const STALE_UPLOAD_MS = 7 * 24 * 60 * 60 * 1000
/** How often, at most, the store sweeps abandoned uploads (multipart ones on create, single-PUT files on put). */
export const SWEEP_EVERY_MS = 60 * 60 * 1000
/** Read size when copying parts: large enough that the copy runs at disk speed. */
const COPY_CHUNK = 4 * 1024 * 1024

type Part = StoredPart & { path: string; inSlot: boolean }

/** Rethrows a missing file or folder as `NoSuchUpload`: the upload was completed or aborted meanwhile. */
const gone = (error: NodeJS.ErrnoException): never => {
  throw error.code === 'ENOENT' ? noSuchUpload() : error
}

/** True when nothing is at `path` (any other failure to look is thrown). */
async function missing(path: string): Promise<boolean> {
  return await stat(path).then(
    () => false,
    (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? true : Promise.reject(error)),
  )
}

/** Copies `size` bytes from `from` at `fromAt` to `to` at `toAt`, one chunk at a time. */
async function copyRange(from: FileHandle, fromAt: number, size: number, to: FileHandle, toAt: number): Promise<void> {
  const buffer = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(size, 1)))
  for (let done = 0; done < size;) {
    const { bytesRead } = await from.read(buffer, 0, Math.min(buffer.byteLength, size - done), fromAt + done)
    if (bytesRead === 0) throw new Error('a part file ended before its recorded size')
    for (let out = 0; out < bytesRead;) out += (await to.write(buffer, out, bytesRead - out, toAt + done + out)).bytesWritten
    done += bytesRead
  }
}

/** Removes an upload's folder; a part being written into it meanwhile (ENOTEMPTY) is waited out. */
function removeFolder(folder: string): Promise<void> {
  return rm(folder, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 })
}

/** A part's own file; gone means a re-send replaced it after it was chosen (S3's InvalidPart). */
function openPart(path: string, partNumber: number): Promise<FileHandle> {
  return open(path, 'r').catch((error: NodeJS.ErrnoException) => Promise.reject(error.code === 'ENOENT' ? changedPart(partNumber) : error))
}

/** True when `parts` are 1..k, each filling its slot, the last at most a slot: `data` is then the object. */
function fillsSlots(parts: Part[], partSize: number): boolean {
  return parts.every((part, i) => part.partNumber === i + 1 && (i === parts.length - 1 ? part.size <= partSize : part.size === partSize))
}

/** The multipart half of the disk blob files, under `disk.uploads`. */
export function diskMultipart(disk: DiskParts): BlobMultipart {
  let sweptAt = -Infinity
  const folderOf = (uploadId: string) => {
    // Ids minted here are 32 hex digits; anything else names no folder of ours.
    if (!/^[0-9a-f]{32}$/.test(uploadId)) throw noSuchUpload()
    return join(disk.uploads, uploadId)
  }

  /** The upload's folder and planned part size, after checking it exists and belongs to `key`. */
  async function openUpload(key: string, uploadId: string): Promise<{ folder: string; partSize?: number }> {
    disk.pathsOf(key)
    const folder = folderOf(uploadId)
    const text = await readFile(join(folder, 'upload.json'), 'utf8').catch(() => null)
    const meta = text === null ? null : JSON.parse(text) as { key: string; partSize?: number }
    if (meta?.key !== key) throw noSuchUpload()
    return { folder, partSize: meta.partSize }
  }

  /** The newest entry of each part number (a replaced part may leave an older one until cleanup). */
  async function partsIn(folder: string): Promise<Part[]> {
    const names = await readdir(folder).catch(() => null)
    if (names === null) throw noSuchUpload()
    const newest = new Map<number, Part & { mtimeMs: number }>()
    for (const name of names) {
      const match = OWN_FILE.exec(name) ?? IN_SLOT.exec(name)
      if (!match) continue
      const path = join(folder, name)
      const info = await stat(path).catch(() => null)
      if (!info) continue
      const partNumber = Number(match[1])
      const inSlot = match[3] !== undefined
      const known = newest.get(partNumber)
      if (!known || info.mtimeMs >= known.mtimeMs) {
        newest.set(partNumber, { partNumber, size: inSlot ? Number(match[3]) : info.size, etag: match[2]!, path, inSlot, mtimeMs: info.mtimeMs })
      }
    }
    return [...newest.values()].sort((a, b) => a.partNumber - b.partNumber).map(({ mtimeMs: _, ...part }) => part)
  }

  /**
   * Same number, other bytes: the entries older than `keep` go (S3 keeps the
   * last part sent). Only older ones: two sends of one part finishing at once
   * would otherwise each remove the other's entry and leave none; the newest
   * stays, the one `partsIn` lists.
   */
  async function dropOthers(folder: string, partNumber: number, keep: string): Promise<void> {
    const kept = await stat(join(folder, keep)).catch(() => null)
    if (!kept) return // replaced meanwhile by a newer send, which drops the older ones itself
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      if (!name.startsWith(`${partNumber}.`) || name === keep) continue
      const other = await stat(join(folder, name)).catch(() => null)
      if (other && other.mtimeMs < kept.mtimeMs) await rm(join(folder, name), { force: true })
    }
  }

  /** Writes part `n` into its slot of `data` if the slot is free; null when it is not. */
  async function putInSlot(folder: string, partSize: number, n: number, body: ReadableStream<Uint8Array>): Promise<{ etag: string; size: number } | null> {
    const slotClaim = join(folder, `.slot-${n}`)
    if (!(await claim(slotClaim, false).catch(gone))) return null
    try {
      // Checked after claiming: a completion that began first is then seen here,
      // one that begins later sees this claim.
      if (await heldByLiveProcess(join(folder, COMPLETING))) return null
      const names = await readdir(folder).catch(gone)
      if (names.some((name) => IN_SLOT.exec(name)?.[1] === String(n))) return null
      const handle = await open(join(folder, DATA), 'r+').catch(gone)
      let written: { etag: string; size: number }
      try {
        written = await disk.writeInto(handle, body, (n - 1) * partSize, partSize)
      } finally {
        await handle.close()
      }
      const marker = `${n}.${written.etag}.${written.size}`
      await writeFile(join(folder, marker), '').catch(gone)
      await dropOthers(folder, n, marker)
      return written
    } finally {
      await rm(slotClaim, { force: true })
    }
  }

  async function putOwnFile(folder: string, n: number, body: ReadableStream<Uint8Array>): Promise<{ etag: string; size: number }> {
    const temp = join(folder, `.part-${randomUUID()}.tmp`)
    const written = await disk.writeStreamed(temp, body).catch(gone)
    const name = `${n}.${written.etag}`
    try {
      await rename(temp, join(folder, name))
    } catch (error) {
      await rm(temp, { force: true })
      gone(error as NodeJS.ErrnoException)
    }
    await dropOthers(folder, n, name)
    return written
  }

  /** Fills the slots of parts kept in their own files, then cuts `data` to the object's length. */
  async function fillSlots(folder: string, parts: Part[], partSize: number): Promise<void> {
    const handle = await open(join(folder, DATA), 'r+')
    try {
      for (const part of parts.filter((p) => !p.inSlot)) {
        // An older version of this part in its slot is about to be overwritten: unlist it first.
        for (const name of await readdir(folder)) if (IN_SLOT.exec(name)?.[1] === String(part.partNumber)) await rm(join(folder, name), { force: true })
        const source = await openPart(part.path, part.partNumber)
        try {
          await copyRange(source, 0, part.size, handle, (part.partNumber - 1) * partSize)
        } finally {
          await source.close()
        }
      }
      // The cut drops the slots past the object: they are unlisted first, so a
      // crash after it lists no part whose bytes are gone.
      for (const name of await readdir(folder)) if (Number(IN_SLOT.exec(name)?.[1]) > parts.length) await rm(join(folder, name), { force: true })
      await handle.truncate((parts.length - 1) * partSize + parts.at(-1)!.size)
    } finally {
      await handle.close()
    }
  }

  /**
   * A completion whose `data` was already published: the retry of one that
   * died between publishing and removing the folder, or one that ran beside
   * another (which is removing the folder). The upload is finished either
   * way, so its folder goes; the retry succeeds if the object at `key` has
   * the multipart ETag these parts make (it names each part's MD5 and their
   * count), else it is told the upload is gone, as S3 tells a completion of
   * a completed upload.
   */
  async function finishPublished(key: string, folder: string, etag: string): Promise<{ size: number; etag: string }> {
    const object = await disk.head(key)
    await removeFolder(folder)
    if (object?.etag !== etag) throw noSuchUpload()
    return { size: object.size, etag }
  }

  /** Ends an upload: its record first, so nobody opens it while the rest goes, then the folder (the lock last of all). */
  async function finish(folder: string): Promise<void> {
    await rm(join(folder, 'upload.json'), { force: true })
    await removeFolder(folder)
  }

  /** Streams the parts, in order, into a new file of the folder; returns its path. */
  async function copyParts(folder: string, parts: Part[], partSize: number | undefined): Promise<string> {
    const joined = join(folder, `.joined-${randomUUID()}.tmp`)
    const out = await open(joined, 'wx')
    try {
      let at = 0
      for (const part of parts) {
        const source = part.inSlot ? await open(join(folder, DATA), 'r') : await openPart(part.path, part.partNumber)
        try {
          await copyRange(source, part.inSlot ? (part.partNumber - 1) * partSize! : 0, part.size, out, at)
        } finally {
          await source.close()
        }
        at += part.size
      }
      await out.close()
      return joined
    } catch (error) {
      await out.close().catch(() => {})
      await rm(joined, { force: true })
      throw error
    }
  }

  return {
    async create(key, partSize) {
      disk.pathsOf(key)
      const uploadId = randomUUID().replaceAll('-', '')
      const folder = folderOf(uploadId)
      await mkdir(folder, { recursive: true })
      const laidOut = partSize !== undefined && Number.isSafeInteger(partSize) && partSize > 0
      // `data` stays sparse: each slot is written as its part arrives.
      if (laidOut) await writeFile(join(folder, DATA), '')
      await writeFile(join(folder, 'upload.json'), JSON.stringify(laidOut ? { key, partSize } : { key }))
      if (Date.now() - sweptAt >= SWEEP_EVERY_MS) {
        sweptAt = Date.now()
        // Two stats per upload; housekeeping never fails a create.
        await sweepStaleUploads(disk.uploads, sweptAt - STALE_UPLOAD_MS).catch(() => {})
      }
      return uploadId
    },

    async putPart(key, uploadId, partNumber, body, length) {
      const { folder, partSize } = await openUpload(key, uploadId)
      // Only a part declared to fit its slot goes there; writeInto refuses more bytes than that.
      const fits = partSize !== undefined && length !== undefined && length > 0 && length <= partSize &&
        (partNumber - 1) * partSize + length <= MAX_OBJECT_SIZE
      const inSlot = fits ? await putInSlot(folder, partSize, partNumber, body) : null
      return inSlot ?? await putOwnFile(folder, partNumber, body)
    },

    async listParts(key, uploadId) {
      const parts = await partsIn((await openUpload(key, uploadId)).folder)
      return parts.map(({ partNumber, size, etag }) => ({ partNumber, size, etag }))
    },

    async assemble(key, uploadId, partNumbers, etag, partEtags) {
      const { folder, partSize } = await openUpload(key, uploadId)
      const lock = join(folder, COMPLETING)
      if (!(await claim(lock, true).catch(gone))) throw new StorageError('OperationAborted', 409, 'Another request is completing this upload; try again.')
      try {
        // Laid out, `data` leaves the folder only when it is published or the
        // folder removed: either way the upload is over.
        if (partSize !== undefined && (await missing(join(folder, DATA)))) return await finishPublished(key, folder, etag)
        const byNumber = new Map((await partsIn(folder)).map((part) => [part.partNumber, part]))
        const parts = partNumbers.map((n, i) => {
          const part = byNumber.get(n)
          if (!part) throw new StorageError('InvalidPart', 400, `Part ${n} could not be found.`)
          // Read under the lock: a part re-sent after the completion checked it is not joined silently.
          if (partEtags && part.etag !== partEtags[i]) throw changedPart(n)
          return part
        })
        // A slot write still running may touch `data` (only slots no listed part
        // fills): the listed bytes are then copied out instead of renamed.
        const names = await readdir(folder)
        const writing = await Promise.all(names.filter((name) => SLOT_CLAIM.test(name)).map((name) => heldByLiveProcess(join(folder, name))))
        const inPlace = partSize !== undefined && !writing.includes(true) && fillsSlots(parts, partSize)
        const file = inPlace ? join(folder, DATA) : await copyParts(folder, parts, partSize)
        if (inPlace) await fillSlots(folder, parts, partSize)
        try {
          const size = await disk.publish(key, file, etag).catch(gone)
          await finish(folder)
          return { size, etag }
        } catch (error) {
          if (!inPlace) await rm(file, { force: true })
          throw error
        }
      } finally {
        await rm(lock, { force: true })
      }
    },

    async abort(key, uploadId) {
      const { folder } = await openUpload(key, uploadId)
      // A completion holds the folder while it joins the parts: one of the two wins, never both.
      if (!(await claim(join(folder, COMPLETING), true).catch(gone))) {
        throw new StorageError('OperationAborted', 409, 'The upload is being completed; it can no longer be aborted.')
      }
      await finish(folder)
    },
  }
}

/**
 * Removes the unfinished uploads under `uploads` that last changed before
 * `cutoffMs` (epoch milliseconds) and that no live process is writing or
 * completing; returns their ids. An upload changes with its folder (a part
 * stored, a claim taken) or its `data` file (a part written into its slot).
 */
export async function sweepStaleUploads(uploads: string, cutoffMs: number): Promise<string[]> {
  const removed: string[] = []
  for (const id of await readdir(uploads).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{32}$/.test(id)) continue
    const folder = join(uploads, id)
    const times = await Promise.all([folder, join(folder, DATA)].map((path) => stat(path).then((info) => info.mtimeMs, () => 0)))
    if (times[0] === 0 || Math.max(...times) >= cutoffMs) continue
    const names = await readdir(folder).catch(() => [] as string[])
    const claims = names.filter((name) => name === COMPLETING || SLOT_CLAIM.test(name))
    if ((await Promise.all(claims.map((name) => heldByLiveProcess(join(folder, name))))).includes(true)) continue
    await removeFolder(folder)
    removed.push(id)
  }
  return removed
}
