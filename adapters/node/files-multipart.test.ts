import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { BlobFiles, BlobMultipart } from '../../src/storage/types.ts'
import { createDiskFiles, writeInto, writeStreamed } from './files.ts'
import { diskMultipart, STALE_UPLOAD_MS, sweepStaleUploads } from './files-multipart.ts'

const MiB = 1024 * 1024
/** Two slots of a MiB or more: bodies past the 1 MiB write batch reach the disk before they end. */
const PART = 2 * MiB
const KEY = 'c1/e1/video.mp4'

let dir: string
let files: BlobFiles
let multipart: BlobMultipart
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'episodic-multipart-'))
  files = createDiskFiles(dir)
  multipart = files.multipart!
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** `size` bytes that differ with `seed`, so a misplaced or stale byte shows. */
function bytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size)
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed * 101) & 0xff
  return out
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex')

/** `data` in 256 KiB chunks; with `failAt`, the stream errors after that many bytes. */
function streamOf(data: Uint8Array, failAt?: number): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (failAt !== undefined && at >= failAt) return controller.error(new Error('client went away'))
      if (at >= data.byteLength) return controller.close()
      const end = Math.min(data.byteLength, at + 256 * 1024, failAt ?? Infinity)
      controller.enqueue(data.slice(at, end))
      at = end
    },
  })
}

const put = (id: string, n: number, data: Uint8Array, declared = data.byteLength) => multipart.putPart(KEY, id, n, streamOf(data), declared)

/** Compared by digest: a deep equality of megabytes takes the test runner minutes. */
async function expectObject(expected: Uint8Array): Promise<void> {
  const object = await files.get(KEY)
  const stored = new Uint8Array(await new Response(object!.body).arrayBuffer())
  expect({ size: stored.byteLength, md5: md5(stored) }).toEqual({ size: expected.byteLength, md5: md5(expected) })
}

const joined = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const part of parts) out.set(part, (at += part.byteLength) - part.byteLength)
  return out
}

describe('disk multipart with a planned part size', () => {
  it('refuses to join a part re-sent after the completion checked its ETag (InvalidPart), and joins nothing', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b, c] = [bytes(PART, 1), bytes(PART, 2), bytes(100, 3)]
    for (const [n, data] of [[1, a], [2, b], [3, c]] as const) await put(id, n, data)
    const checked = await multipart.listParts(KEY, id)
    // The window the adversarial pass hit: part 2 sent again, same size, other bytes, between
    // the completion's check and the join. Before, the object became a+B+c under a+b+c's ETag.
    await put(id, 2, bytes(PART, 9))
    const join = multipart.assemble(KEY, id, [1, 2, 3], 'x-3', checked.map((part) => part.etag))
    await expect(join).rejects.toMatchObject({ code: 'InvalidPart', status: 400 })
    expect(await files.get(KEY)).toBeNull()
    // The upload is still there: completed with the ETags it now lists, it holds the new part 2.
    const now = await multipart.listParts(KEY, id)
    await multipart.assemble(KEY, id, [1, 2, 3], 'x-3', now.map((part) => part.etag))
    await expectObject(joined(a, bytes(PART, 9), c))
  })

  it('takes parts in any order, the short last one first, and completes with the bytes in order', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b, c] = [bytes(PART, 1), bytes(PART, 2), bytes(12_345, 3)]
    expect(await put(id, 3, c)).toEqual({ size: c.byteLength, etag: md5(c) })
    await put(id, 1, a)
    await put(id, 2, b)
    expect(await multipart.listParts(KEY, id)).toEqual([
      { partNumber: 1, size: PART, etag: md5(a) },
      { partNumber: 2, size: PART, etag: md5(b) },
      { partNumber: 3, size: c.byteLength, etag: md5(c) },
    ])
    expect(await multipart.assemble(KEY, id, [1, 2, 3], 'x-3')).toEqual({ size: 2 * PART + c.byteLength, etag: 'x-3' })
    await expectObject(joined(a, b, c))
    expect((await files.head!(KEY))?.etag).toBe('x-3')
    await expect(multipart.listParts(KEY, id)).rejects.toMatchObject({ code: 'NoSuchUpload' })
  })

  it('keeps the earlier part when its re-send fails midway, and lists nothing of a first send that failed', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b] = [bytes(PART, 1), bytes(PART, 2)]
    await put(id, 1, a)
    await expect(multipart.putPart(KEY, id, 1, streamOf(bytes(PART, 9), 1.5 * MiB), PART)).rejects.toThrow('client went away')
    await expect(multipart.putPart(KEY, id, 2, streamOf(b, 1.5 * MiB), PART)).rejects.toThrow('client went away')
    expect(await multipart.listParts(KEY, id)).toEqual([{ partNumber: 1, size: PART, etag: md5(a) }])
    await put(id, 2, b)
    await multipart.assemble(KEY, id, [1, 2], 'x-2')
    await expectObject(joined(a, b))
  })

  it('replaces a part re-sent with the same, a greater or a smaller length', async () => {
    for (const length of [PART, PART + 7, MiB]) {
      const id = await multipart.create(KEY, PART)
      const [a, b, again] = [bytes(PART, 1), bytes(PART, 2), bytes(length, 5)]
      await put(id, 1, a)
      await put(id, 2, b)
      expect(await put(id, 1, again)).toEqual({ size: length, etag: md5(again) })
      expect(await multipart.listParts(KEY, id)).toEqual([
        { partNumber: 1, size: length, etag: md5(again) },
        { partNumber: 2, size: PART, etag: md5(b) },
      ])
      expect((await multipart.assemble(KEY, id, [1, 2], 'x-2')).size).toBe(length + PART)
      await expectObject(joined(again, b))
    }
  })

  it('completes with a gap in the numbers, or with fewer parts than were sent', async () => {
    const [a, b, c] = [bytes(PART, 1), bytes(PART, 2), bytes(999, 3)]
    const gap = await multipart.create(KEY, PART)
    await put(gap, 1, a)
    await put(gap, 3, c)
    await multipart.assemble(KEY, gap, [1, 3], 'x-2')
    await expectObject(joined(a, c))

    const fewer = await multipart.create(KEY, PART)
    for (const [n, part] of [[1, a], [2, b], [3, c]] as const) await put(fewer, n, part)
    expect((await multipart.assemble(KEY, fewer, [1, 2], 'x-2')).size).toBe(2 * PART)
    await expectObject(joined(a, b))
  })

  it('refuses a body longer than its declared length without touching the next slot', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b] = [bytes(PART, 1), bytes(PART, 2)]
    await put(id, 2, b)
    await expect(multipart.putPart(KEY, id, 1, streamOf(bytes(PART + MiB, 7)), PART)).rejects.toThrow('longer than')
    expect(await multipart.listParts(KEY, id)).toEqual([{ partNumber: 2, size: PART, etag: md5(b) }])
    await put(id, 1, a)
    await multipart.assemble(KEY, id, [1, 2], 'x-2')
    await expectObject(joined(a, b))
  })

  it('lets the later of two sends of one part win while the first still holds its slot', async () => {
    const id = await multipart.create(KEY, PART)
    const [first, second] = [bytes(PART, 1), bytes(PART, 2)]
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let sent = 0
    const slow = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === MiB + 1) await held
        if (sent >= PART) return controller.close()
        const end = sent === 0 ? MiB + 1 : PART
        controller.enqueue(first.slice(sent, end))
        sent = end
      },
    })
    const pending = multipart.putPart(KEY, id, 1, slow, PART)
    while (sent === 0) await new Promise((r) => setTimeout(r, 1))
    expect(await put(id, 1, second)).toEqual({ size: PART, etag: md5(second) })
    release()
    expect(await pending).toEqual({ size: PART, etag: md5(first) })
    expect(await multipart.listParts(KEY, id)).toEqual([{ partNumber: 1, size: PART, etag: md5(first) }])
    await multipart.assemble(KEY, id, [1], 'x-1')
    await expectObject(first)
  })

  it('lets one of two simultaneous completions through and turns the other away', async () => {
    const id = await multipart.create(KEY, PART)
    await put(id, 1, bytes(100, 1))
    const results = await Promise.allSettled([multipart.assemble(KEY, id, [1], 'x-1'), multipart.assemble(KEY, id, [1], 'x-1')])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(['OperationAborted', 'NoSuchUpload']).toContain(refused.reason.code)
    await expectObject(bytes(100, 1))
  })

  it('keeps one of two sends of a part that finish together, listed with the bytes it holds', async () => {
    // Both sends used to remove each other's entry when their ends crossed: two 200s, no part.
    for (let round = 0; round < 8; round++) {
      const id = await multipart.create(KEY, PART)
      const [a, b] = [bytes(PART, 10 + round), bytes(PART, 50 + round)]
      const [x, y] = await Promise.all([put(id, 1, a), put(id, 1, b)])
      expect([x.etag, y.etag]).toEqual([md5(a), md5(b)])
      const listed = await multipart.listParts(KEY, id)
      expect(listed.map((p) => p.partNumber)).toEqual([1])
      expect([md5(a), md5(b)]).toContain(listed[0]!.etag)
      await multipart.assemble(KEY, id, [1], 'x-1', [listed[0]!.etag])
      await expectObject(listed[0]!.etag === md5(a) ? a : b)
    }
  })

  it('refuses an abort while a completion holds the upload; one of the two wins, never both', async () => {
    const id = await multipart.create(KEY, PART)
    await put(id, 1, bytes(100, 1))
    const folder = join(dir, '.uploads', id)
    await writeFile(join(folder, '.completing'), String(process.pid)) // a completion under way
    await expect(multipart.abort(KEY, id)).rejects.toMatchObject({ code: 'OperationAborted', status: 409 })
    await rm(join(folder, '.completing'))
    await multipart.assemble(KEY, id, [1], 'x-1')
    await expect(multipart.abort(KEY, id)).rejects.toMatchObject({ code: 'NoSuchUpload' })
    await expectObject(bytes(100, 1))
    // And the other way round: an aborted upload cannot be completed.
    const other = await multipart.create(KEY, PART)
    await put(other, 1, bytes(100, 2))
    const [aborted, completed] = await Promise.allSettled([multipart.abort(KEY, other), multipart.assemble(KEY, other, [1], 'x-1')])
    expect([aborted.status, completed.status].filter((status) => status === 'fulfilled')).toHaveLength(1)
  })

  it('forgets everything on abort, and refuses parts after it', async () => {
    const id = await multipart.create(KEY, PART)
    await put(id, 1, bytes(PART, 1))
    await multipart.abort(KEY, id)
    await expect(put(id, 2, bytes(10, 2))).rejects.toMatchObject({ code: 'NoSuchUpload' })
    await expect(multipart.assemble(KEY, id, [1], 'x-1')).rejects.toMatchObject({ code: 'NoSuchUpload' })
    expect(await files.get(KEY)).toBeNull()
  })
})

/** The pid of a process that has exited (and been reaped). */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!

describe('disk multipart after a process died mid-completion', () => {
  /**
   * Leaves what a completion killed right after publishing leaves: the object
   * in place, and the upload's folder as it was (`upload.json`, the parts'
   * names, `.completing` holding the dead pid), without `data` when the parts
   * filled their slots (it was renamed into place), with it when they were
   * copied out. The listed parts here are all in their slots, so neither
   * path changes anything else in the folder before publishing.
   */
  async function crashAfterPublish(id: string, numbers: number[], etag: string, inPlace: boolean): Promise<void> {
    const folder = join(dir, '.uploads', id)
    const saved = join(dir, 'saved-upload')
    await cp(folder, saved, { recursive: true })
    await multipart.assemble(KEY, id, numbers, etag)
    await rename(saved, folder)
    if (inPlace) await rm(join(folder, 'data'))
    await writeFile(join(folder, '.completing'), String(deadPid()))
  }

  /**
   * Runs a completion that stops for good when it calls `publish` (its
   * process dies there) and gives its `.completing` a dead pid: the folder is
   * then exactly as that crash leaves it, `data` filled and cut to the object.
   */
  async function crashAtPublish(id: string, numbers: number[], etag: string): Promise<void> {
    let reached!: () => void
    const stopped = new Promise<void>((resolve) => (reached = resolve))
    const dying = diskMultipart({
      uploads: join(dir, '.uploads'),
      writeStreamed,
      writeInto,
      head: files.head!,
      pathsOf: () => {},
      publish: () => (reached(), new Promise<number>(() => {})),
    })
    void dying.assemble(KEY, id, numbers, etag)
    await stopped
    await writeFile(join(dir, '.uploads', id, '.completing'), String(deadPid()))
  }

  // Multipart uploads' folders (single PUTs write under `put/` beside them).
  const uploadsLeft = async () => (await readdir(join(dir, '.uploads'))).filter((name) => name !== 'put')

  it('answers a retried completion as the first one would have, and removes the folder', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b] = [bytes(PART, 1), bytes(999, 2)]
    await put(id, 1, a)
    await put(id, 2, b)
    await crashAfterPublish(id, [1, 2], 'x-2', true)
    expect(await multipart.listParts(KEY, id)).toHaveLength(2)
    expect(await multipart.assemble(KEY, id, [1, 2], 'x-2')).toEqual({ size: PART + 999, etag: 'x-2' })
    await expectObject(joined(a, b))
    expect(await uploadsLeft()).toEqual([])
    await expect(multipart.assemble(KEY, id, [1, 2], 'x-2')).rejects.toMatchObject({ code: 'NoSuchUpload' })
  })

  it('answers NoSuchUpload, and still removes the folder, when the object is not what these parts make', async () => {
    const [a, b] = [bytes(PART, 1), bytes(999, 2)]
    // Retried with fewer parts than were completed: the bytes of the rest are gone with `data`.
    const fewer = await multipart.create(KEY, PART)
    await put(fewer, 1, a)
    await put(fewer, 2, b)
    await crashAfterPublish(fewer, [1, 2], 'x-2', true)
    await expect(multipart.assemble(KEY, fewer, [1], 'x-1')).rejects.toMatchObject({ code: 'NoSuchUpload' })
    expect(await uploadsLeft()).toEqual([])
    await expectObject(joined(a, b))

    // Replaced by a later PUT before the retry came.
    const replaced = await multipart.create(KEY, PART)
    await put(replaced, 1, a)
    await crashAfterPublish(replaced, [1], 'x-1', true)
    await files.put(KEY, streamOf(b))
    await expect(multipart.assemble(KEY, replaced, [1], 'x-1')).rejects.toMatchObject({ code: 'NoSuchUpload' })
    expect(await uploadsLeft()).toEqual([])
    await expectObject(b)
  })

  it('lists no part that a completion cut off before it died, so a retry with more parts cannot publish zeros', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b, c] = [bytes(PART, 1), bytes(PART, 2), bytes(999, 3)]
    for (const [n, part] of [[1, a], [2, b], [3, c]] as const) await put(id, n, part)
    await crashAtPublish(id, [1, 2], 'x-2')
    expect((await multipart.listParts(KEY, id)).map((part) => part.partNumber)).toEqual([1, 2])
    await expect(multipart.assemble(KEY, id, [1, 2, 3], 'x-3')).rejects.toMatchObject({ code: 'InvalidPart' })
    expect(await files.get(KEY)).toBeNull()
    expect(await multipart.assemble(KEY, id, [1, 2], 'x-2')).toEqual({ size: 2 * PART, etag: 'x-2' })
    await expectObject(joined(a, b))
    expect(await uploadsLeft()).toEqual([])
  })

  it('publishes again when the parts were copied out (the crash left `data` in place)', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, c] = [bytes(PART, 1), bytes(999, 3)]
    await put(id, 1, a)
    await put(id, 3, c)
    await crashAfterPublish(id, [1, 3], 'x-2', false)
    expect(await multipart.assemble(KEY, id, [1, 3], 'x-2')).toEqual({ size: PART + 999, etag: 'x-2' })
    await expectObject(joined(a, c))
    expect(await uploadsLeft()).toEqual([])
  })
})

describe('disk multipart after a part writer died', () => {
  it('takes a part re-sent while a dead writer still claims its slot, in a file of its own', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b] = [bytes(PART, 1), bytes(999, 2)]
    const folder = join(dir, '.uploads', id)
    // Writers killed mid-part: one after writing its pid to the claim (and
    // some bytes to its slot), one between creating the claim and writing it.
    await writeFile(join(folder, 'data'), bytes(MiB, 9))
    await writeFile(join(folder, '.slot-1'), String(deadPid()))
    await writeFile(join(folder, '.slot-2'), '')
    expect(await put(id, 1, a)).toEqual({ size: PART, etag: md5(a) })
    expect(await put(id, 2, b)).toEqual({ size: 999, etag: md5(b) })
    expect(await readdir(folder)).toEqual(expect.arrayContaining([`1.${md5(a)}`, `2.${md5(b)}`]))
    expect(await multipart.assemble(KEY, id, [1, 2], 'x-2')).toEqual({ size: PART + 999, etag: 'x-2' })
    await expectObject(joined(a, b))
  })
})

describe('disk multipart with a claim left empty by a process that died writing it', () => {
  const claimedLongAgo = async (path: string) => {
    await writeFile(path, '')
    await utimes(path, new Date(0), new Date(0))
  }

  it('completes once the empty completion claim is old, and refuses while it is fresh', async () => {
    const id = await multipart.create(KEY, PART)
    await put(id, 1, bytes(999, 1))
    const lock = join(dir, '.uploads', id, '.completing')
    await writeFile(lock, '')
    await expect(multipart.assemble(KEY, id, [1], 'x-1')).rejects.toMatchObject({ code: 'OperationAborted' })
    await claimedLongAgo(lock)
    expect(await multipart.assemble(KEY, id, [1], 'x-1')).toEqual({ size: 999, etag: 'x-1' })
    await expectObject(bytes(999, 1))
  })

  it('still completes by renaming `data` when an old empty slot claim is left', async () => {
    const id = await multipart.create(KEY, PART)
    const [a, b] = [bytes(PART, 1), bytes(999, 2)]
    await put(id, 1, a)
    await put(id, 2, b)
    const folder = join(dir, '.uploads', id)
    await claimedLongAgo(join(folder, '.slot-3'))
    const built = (await stat(join(folder, 'data'))).ino
    await multipart.assemble(KEY, id, [1, 2], 'x-2')
    // The same file, not a copy of the parts: no running write was assumed.
    expect((await stat(join(dir, KEY))).ino).toBe(built)
    await expectObject(joined(a, b))
  })
})

describe('disk multipart: uploads abandoned for 7 days', () => {
  /** Sets the folder and every file of an upload to `when`. */
  const touchedAt = async (id: string, when: Date) => {
    const folder = join(dir, '.uploads', id)
    for (const name of await readdir(folder)) await utimes(join(folder, name), when, when)
    await utimes(folder, when, when)
  }
  const eightDaysAgo = () => new Date(Date.now() - STALE_UPLOAD_MS - 24 * 3600 * 1000)

  it('are removed unless a live process claims them; recent ones stay', async () => {
    const [stale, recent, completing] = [await multipart.create(KEY, PART), await multipart.create(KEY, PART), await multipart.create(KEY, PART)]
    for (const id of [stale, recent, completing]) await put(id, 1, bytes(999, 1))
    await writeFile(join(dir, '.uploads', completing, '.completing'), String(process.pid))
    await touchedAt(stale, eightDaysAgo())
    await touchedAt(completing, eightDaysAgo())
    // A part written into its slot 6 days ago (only `data` changed) keeps the upload.
    await touchedAt(recent, eightDaysAgo())
    const sixDaysAgo = new Date(Date.now() - 6 * 24 * 3600 * 1000)
    await utimes(join(dir, '.uploads', recent, 'data'), sixDaysAgo, sixDaysAgo)

    expect(await sweepStaleUploads(join(dir, '.uploads'), Date.now() - STALE_UPLOAD_MS)).toEqual([stale])
    expect((await readdir(join(dir, '.uploads'))).sort()).toEqual([recent, completing].sort())
    await expect(multipart.listParts(KEY, stale)).rejects.toMatchObject({ code: 'NoSuchUpload' })
    expect(await multipart.listParts(KEY, recent)).toHaveLength(1)
  })

  it('are swept when an upload is created, at most once an hour', async () => {
    const stale = await multipart.create(KEY, PART)
    await touchedAt(stale, eightDaysAgo())
    const fresh = createDiskFiles(dir).multipart! // a new process: it has not swept yet
    const id = await fresh.create(KEY, PART)
    expect(await readdir(join(dir, '.uploads'))).toEqual([id])
    // Within the hour the same process does not sweep again.
    const another = await multipart.create(KEY, PART)
    await touchedAt(another, eightDaysAgo())
    await fresh.create(KEY, PART)
    expect(await readdir(join(dir, '.uploads'))).toContain(another)
  })
})
