import { Kysely, type LogEvent } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATABASES } from '../../test/helpers/databases.ts'
import { createTempDatabase } from '../../test/helpers/postgres.ts'
import type { Defer } from '../db/batch.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { pgliteDialect } from '../db/pglite.ts'
import { createPostgresSql, postgresJsDialect } from '../db/postgres-js.ts'
import type { Database } from '../db/schema.ts'
import { EpisodicError } from '../errors.ts'
import type { NewEpisode } from './rows.ts'
import { createEpisodeWriter } from './writer.ts'
import { openTestPGlite } from '../../test/helpers/pglite.ts'

/** A Kysely on `kind` that records the SQL of every statement it runs. */
async function loggedDatabase(kind: 'pglite' | 'postgres') {
  const statements: string[] = []
  const log = (event: LogEvent) => void (event.level === 'query' && statements.push(event.query.sql))
  let drop = async () => {}
  let db: Kysely<Database>
  if (kind === 'pglite') {
    db = new Kysely<Database>({ dialect: pgliteDialect(await openTestPGlite()), log })
  } else {
    const temp = await createTempDatabase()
    drop = temp.drop
    db = new Kysely<Database>({ dialect: postgresJsDialect(createPostgresSql(temp.url, { max: 4 })), log })
  }
  await migrateToLatest(db)
  return { db, statements, close: async () => (await db.destroy(), await drop()) }
}

/** A `defer` fired by hand: everything written before `turn()` is one turn. */
function manualTurns() {
  let due: Array<() => void> = []
  const defer: Defer = (flush) => void due.push(flush)
  return {
    defer,
    turn() {
      const now = due
      due = []
      for (const flush of now) flush()
    },
  }
}

const T0 = new Date('2026-01-01T00:00:00.000Z')
const T1 = new Date('2026-01-01T00:00:01.000Z')
const T2 = new Date('2026-01-01T00:00:02.000Z')

const episode = (id: string, over: Partial<NewEpisode> = {}): NewEpisode => ({
  id,
  clientId: 'c1',
  name: `ep-${id.slice(0, 4)}`,
  source: 'real',
  robot: 'arm',
  policyVersion: 'v1',
  envVersion: null,
  gitSha: null,
  seed: 9007199254740991,
  fps: 30,
  metadata: { task: id.slice(0, 4) },
  artifacts: ['video', 'actions'],
  now: T0,
  ...over,
})

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe.each(DATABASES)('episode writer on %s, batched', (kind) => {
  let h: Awaited<ReturnType<typeof loggedDatabase>>
  beforeAll(async () => {
    h = await loggedDatabase(kind)
    await h.db
      .insertInto('clients')
      .values([
        { id: 'c1', name: 'one', created_at: T0 },
        { id: 'c2', name: 'two', created_at: T0 },
      ])
      .execute()
  })
  afterAll(() => h.close())

  const since = (mark: number, verb: string) => h.statements.slice(mark).filter((s) => s.trimStart().toLowerCase().startsWith(verb))

  it('inserts the opens of one turn in one statement, every field intact', async () => {
    const turns = manualTurns()
    const writer = createEpisodeWriter(h.db, turns.defer)
    const mark = h.statements.length
    const written = [1, 2, 3].map((n) =>
      writer.insert(
        episode(
          uuid(n),
          {
            2: {
              name: 'second',
              robot: 'quad',
              policyVersion: 'v2',
              envVersion: 'sim-3',
              gitSha: 'abc123',
              fps: 60,
              source: 'sim' as const,
              artifacts: ['sensors' as const],
              now: T1,
            },
            3: { clientId: 'c2', seed: null, metadata: {} },
          }[n] ?? {},
        ),
      )
    )
    turns.turn()
    await Promise.all(written)
    expect(since(mark, 'insert')).toHaveLength(1)
    const rows = await h.db.selectFrom('episodes').selectAll().orderBy('id').execute()
    const shape = (r: (typeof rows)[number]) => [
      r.id,
      r.client_id,
      r.name,
      r.source,
      r.robot,
      r.policy_version,
      r.env_version,
      r.git_sha,
      r.seed === null ? null : String(r.seed),
      r.fps,
      r.metadata,
      r.status,
      r.artifacts,
      new Date(r.created_at).toISOString(),
      new Date(r.updated_at).toISOString(),
    ]
    expect(rows.map(shape)).toEqual([
      [
        uuid(1),
        'c1',
        'ep-0000',
        'real',
        'arm',
        'v1',
        null,
        null,
        '9007199254740991',
        30,
        { task: '0000' },
        'recording',
        ['video', 'actions'],
        T0.toISOString(),
        T0.toISOString(),
      ],
      [
        uuid(2),
        'c1',
        'second',
        'sim',
        'quad',
        'v2',
        'sim-3',
        'abc123',
        '9007199254740991',
        60,
        { task: '0000' },
        'recording',
        ['sensors'],
        T1.toISOString(),
        T1.toISOString(),
      ],
      [uuid(3), 'c2', 'ep-0000', 'real', 'arm', 'v1', null, null, null, 30, {}, 'recording', ['video', 'actions'], T0.toISOString(), T0.toISOString()],
    ])
  })

  it('reuses one statement text per batch size', async () => {
    const turns = manualTurns()
    const writer = createEpisodeWriter(h.db, turns.defer)
    const mark = h.statements.length
    for (const ids of [[20, 21], [22, 23, 24], [25, 26]]) {
      const written = ids.map((n) => writer.insert(episode(uuid(n), { name: `n${n}` })))
      turns.turn()
      await Promise.all(written)
    }
    const inserts = since(mark, 'insert')
    expect(inserts).toHaveLength(3)
    expect(inserts[2]).toBe(inserts[0])
    expect(inserts[1]).not.toBe(inserts[0])
    const names = await h.db.selectFrom('episodes').select(['id', 'name']).where('id', '>=', uuid(20)).where('id', '<=', uuid(26)).orderBy('id').execute()
    expect(names.map((r) => r.name)).toEqual(['n20', 'n21', 'n22', 'n23', 'n24', 'n25', 'n26'])
  })

  it('fails only the open the database refuses', async () => {
    const turns = manualTurns()
    const writer = createEpisodeWriter(h.db, turns.defer)
    const written = [
      writer.insert(episode(uuid(4))),
      writer.insert(episode(uuid(1))), // already exists: the primary key refuses it
      writer.insert(episode(uuid(5))),
    ].map((p) => p.then(() => 'ok', () => 'refused'))
    turns.turn()
    expect(await Promise.all(written)).toEqual(['ok', 'refused', 'ok'])
    const ids = (await h.db.selectFrom('episodes').select('id').where('id', '<', uuid(20)).orderBy('id').execute()).map((r) => r.id)
    expect(ids).toEqual([uuid(1), uuid(2), uuid(3), uuid(4), uuid(5)])
  })

  it('applies the finalizes of one turn with the single-statement rule, per item', async () => {
    await h.db.updateTable('episodes').set({ status: 'failed' }).where('id', '=', uuid(2)).execute()
    await h.db.updateTable('episodes').set({ status: 'archived' }).where('id', '=', uuid(5)).execute()
    const turns = manualTurns()
    const writer = createEpisodeWriter(h.db, turns.defer)
    const mark = h.statements.length
    const outcome = (p: Promise<unknown>) => p.then((r) => r, (e: EpisodicError) => e.code)
    const replies = [
      writer.finalize('c1', uuid(1), { status: 'ready', durationS: 12.5, bytesTotal: 1000, metadata: { a: 1 }, now: T1 }),
      writer.finalize('c1', uuid(2), { status: 'ready', fps: 15, metadata: { b: 2 }, now: T1 }), // failed -> ready
      writer.finalize('c1', uuid(1), { status: 'failed', metadata: { c: 3 }, now: T2 }), // same episode again: later statement
      writer.finalize('c1', uuid(3), { status: 'ready', now: T1 }), // another client's episode
      writer.finalize('c1', uuid(5), { status: 'ready', now: T1 }), // archived
      writer.finalize('c1', uuid(9), { status: 'ready', now: T1 }), // unknown
      writer.finalize('c1', uuid(4), { status: 'failed', now: T1 }),
    ].map(outcome)
    turns.turn()
    expect(await Promise.all(replies)).toEqual([
      { episode_id: uuid(1), status: 'ready', updated_at: T1.toISOString() },
      { episode_id: uuid(2), status: 'ready', updated_at: T1.toISOString() },
      // Already ready: status and updated_at stay, the metadata still merges.
      { episode_id: uuid(1), status: 'ready', updated_at: T1.toISOString() },
      'not_found',
      'conflict',
      'not_found',
      { episode_id: uuid(4), status: 'failed', updated_at: T1.toISOString() },
    ])
    // Two UPDATEs: the second carries the repeated episode alone.
    expect(since(mark, 'update')).toHaveLength(2)
    const rows = await h.db.selectFrom('episodes').selectAll().orderBy('id').execute()
    const byId = new Map(rows.map((r) => [r.id, r]))
    expect(byId.get(uuid(1))).toMatchObject({ status: 'ready', duration_s: 12.5, metadata: { task: '0000', a: 1, c: 3 } })
    expect(String(byId.get(uuid(1))!.bytes_total)).toBe('1000')
    expect(byId.get(uuid(2))).toMatchObject({ status: 'ready', fps: 15, metadata: { task: '0000', b: 2 } })
    expect(byId.get(uuid(3))).toMatchObject({ status: 'recording', metadata: {} })
    expect(byId.get(uuid(5))).toMatchObject({ status: 'archived' })
  })

  it('writes one statement per call without a defer', async () => {
    const writer = createEpisodeWriter(h.db)
    const mark = h.statements.length
    await Promise.all([writer.insert(episode(uuid(6))), writer.insert(episode(uuid(7)))])
    expect(since(mark, 'insert')).toHaveLength(2)
    const reply = await writer.finalize('c1', uuid(6), { status: 'ready', metadata: { z: true }, now: T2 })
    expect(reply).toEqual({ episode_id: uuid(6), status: 'ready', updated_at: T2.toISOString() })
  })
})
