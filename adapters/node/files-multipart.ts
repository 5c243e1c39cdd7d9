/**
 * Multipart uploads of the disk `BlobFiles` (see files.ts). Each upload is a
 * folder `<dir>/.uploads/<id>/` holding `upload.json` (its key) and one file
 * per part named `<number>.<md5>`: a part is written to a temporary file and
 * renamed to that name, so its name and bytes always agree and a crash
 * mid-part leaves only a temporary file, never a listed part.
 */
import { randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type BlobMultipart, StorageError, type StoredPart } from '../../src/storage/types.ts'

/** What the multipart folder borrows from the disk files around it. */
export interface DiskParts {
  /** `<dir>/.uploads` */
  uploads: string
  writeStreamed(path: string, body: ReadableStream<Uint8Array>): Promise<{ etag: string; size: number }>
  /** Moves a finished file into place as `key` with `etag`; returns its size. */
  publish(key: string, temp: string, etag: string): Promise<number>
  /** Throws for a key that may not map onto the folder. */
  pathsOf(key: string): unknown
}

const PART_FILE = /^(\d{1,5})\.([0-9a-f]{32})$/
/** Read size when joining parts: large enough that the copy runs at disk speed. */
const COPY_CHUNK = 4 * 1024 * 1024

const noSuchUpload = () =>
  new StorageError('NoSuchUpload', 404, 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.')

/** The multipart half of the disk blob files, under `disk.uploads`. */
export function diskMultipart(disk: DiskParts): BlobMultipart {
  const folderOf = (uploadId: string) => {
    // Ids minted here are 32 hex digits; anything else names no folder of ours.
    if (!/^[0-9a-f]{32}$/.test(uploadId)) throw noSuchUpload()
    return join(disk.uploads, uploadId)
  }

  /** The upload's folder, after checking it exists and belongs to `key`. */
  async function openUpload(key: string, uploadId: string): Promise<string> {
    disk.pathsOf(key)
    const folder = folderOf(uploadId)
    const meta = await readFile(join(folder, 'upload.json'), 'utf8').catch(() => null)
    if (meta === null || (JSON.parse(meta) as { key: string }).key !== key) throw noSuchUpload()
    return folder
  }

  /** The newest file of each part number (an overwritten part may leave an older one until cleanup). */
  async function partsIn(folder: string): Promise<(StoredPart & { path: string })[]> {
    const names = await readdir(folder).catch(() => null)
    if (names === null) throw noSuchUpload()
    const newest = new Map<number, StoredPart & { path: string; mtimeMs: number }>()
    for (const name of names) {
      const match = PART_FILE.exec(name)
      if (!match) continue
      const path = join(folder, name)
      const info = await stat(path).catch(() => null)
      if (!info) continue
      const partNumber = Number(match[1])
      const known = newest.get(partNumber)
      if (!known || info.mtimeMs >= known.mtimeMs) newest.set(partNumber, { partNumber, size: info.size, etag: match[2]!, path, mtimeMs: info.mtimeMs })
    }
    return [...newest.values()].sort((a, b) => a.partNumber - b.partNumber).map(({ mtimeMs: _, ...part }) => part)
  }

  return {
    async create(key) {
      disk.pathsOf(key)
      const uploadId = randomUUID().replaceAll('-', '')
      const folder = folderOf(uploadId)
      await mkdir(folder, { recursive: true })
      await writeFile(join(folder, 'upload.json'), JSON.stringify({ key }))
      return uploadId
    },

    async putPart(key, uploadId, partNumber, body) {
      const folder = await openUpload(key, uploadId)
      const temp = join(folder, `.part-${randomUUID()}.tmp`)
      const written = await disk.writeStreamed(temp, body)
      const target = join(folder, `${partNumber}.${written.etag}`)
      try {
        await rename(temp, target)
      } catch (error) {
        await rm(temp, { force: true })
        // The upload was completed or aborted while this part streamed.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw noSuchUpload()
        throw error
      }
      // Same number, other bytes: the older file goes (S3 keeps the last part sent).
      for (const name of await readdir(folder).catch(() => [] as string[])) {
        if (name.startsWith(`${partNumber}.`) && join(folder, name) !== target) await rm(join(folder, name), { force: true })
      }
      return written
    },

    async listParts(key, uploadId) {
      const parts = await partsIn(await openUpload(key, uploadId))
      return parts.map(({ partNumber, size, etag }) => ({ partNumber, size, etag }))
    },

    async assemble(key, uploadId, partNumbers, etag) {
      const folder = await openUpload(key, uploadId)
      const byNumber = new Map((await partsIn(folder)).map((part) => [part.partNumber, part]))
      const parts = partNumbers.map((n) => {
        const part = byNumber.get(n)
        if (!part) throw new StorageError('InvalidPart', 400, `Part ${n} could not be found.`)
        return part
      })
      const paths = parts.map((part) => part.path)
      // The first part becomes the object's file; the others are appended to it.
      const joined = join(folder, `.joined-${randomUUID()}.tmp`)
      await rename(paths[0]!, joined)
      try {
        const handle = await open(joined, 'a')
        try {
          for (const path of paths.slice(1)) {
            for await (const chunk of createReadStream(path, { highWaterMark: COPY_CHUNK })) await handle.write(chunk as Buffer)
          }
        } finally {
          await handle.close()
        }
        const size = await disk.publish(key, joined, etag)
        await rm(folder, { recursive: true, force: true })
        return { size, etag }
      } catch (error) {
        // Put the first part back as it was, so the upload can still be completed or aborted.
        await truncate(joined, parts[0]!.size).catch(() => {})
        await rename(joined, paths[0]!).catch(() => {})
        throw error
      }
    },

    async abort(key, uploadId) {
      const folder = await openUpload(key, uploadId)
      await rm(folder, { recursive: true, force: true })
    },
  }
}
