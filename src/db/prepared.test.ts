import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import { prepareQuery, prepareRows } from './prepared.ts'
import type { Database } from './schema.ts'

let db: Kysely<Database>
beforeAll(async () => {
  db = await openTestDatabase()
  await db.insertInto('clients').values({ id: 'c1', name: 'one', created_at: new Date(0) }).execute()
})
afterAll(() => db.destroy())

const rename = prepareQuery(
  ['id', 'name'],
  (db, p) => db.updateTable('clients').set({ name: sql`${p.name} || '!'` }).where('id', '=', p.id as string).returning(['id', 'name']),
)

describe('prepareQuery', () => {
  it('runs with fresh values each time, keeping the constants the builder wrote', async () => {
    expect((await rename(db, { id: 'c1', name: 'a' })).rows).toEqual([{ id: 'c1', name: 'a!' }])
    expect((await rename(db, { id: 'c1', name: 'b' })).rows).toEqual([{ id: 'c1', name: 'b!' }])
    expect((await rename(db, { id: 'nope', name: 'c' })).rows).toEqual([])
  })

  it('runs inside a transaction, which rolls it back like any query', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        expect((await rename(trx, { id: 'c1', name: 'in-trx' })).rows[0]?.name).toBe('in-trx!')
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    const row = await db.selectFrom('clients').select('name').where('id', '=', 'c1').executeTakeFirstOrThrow()
    expect(row.name).toBe('b!')
  })

  it('passes constant parameters through in their slots', async () => {
    const pick = prepareQuery(
      ['id'],
      (db, p) =>
        db.selectFrom('clients').select(sql<string>`${'fixed'}::text`.as('k')).select('id').where('id', '=', p.id as string).where('name', '<>', 'zzz'),
    )
    expect((await pick(db, { id: 'c1' })).rows).toEqual([{ k: 'fixed', id: 'c1' }])
  })

  it('refuses a stand-in used outside a value position, naming it', async () => {
    const bad = prepareQuery(
      ['column', 'id'],
      (db, p) => db.selectFrom('clients').select(sql.ref<string>(p.column as string).as('x')).where('id', '=', p.id as string),
    )
    await expect(bad(db, { column: 'name', id: 'c1' })).rejects.toThrow('prepareQuery: parameter(s) column must be passed as values')
  })
})

describe('prepareRows', () => {
  it('runs a statement over any number of rows, one compile per row count', async () => {
    const insert = prepareRows(
      ['id', 'name'],
      (db, rows) => db.insertInto('clients').values(rows.map((r) => ({ id: r.id as string, name: r.name as string, created_at: new Date(0) }))).returning('id'),
    )
    expect((await insert(db, [{ id: 'r1', name: 'one' }, { id: 'r2', name: 'two' }])).rows).toEqual([{ id: 'r1' }, { id: 'r2' }])
    expect((await insert(db, [{ id: 'r3', name: 'three' }])).rows).toEqual([{ id: 'r3' }])
    expect((await insert(db, [{ id: 'r4', name: 'four' }, { id: 'r5', name: 'five' }])).rows).toEqual([{ id: 'r4' }, { id: 'r5' }])
    const names = await db.selectFrom('clients').select('name').where('id', 'like', 'r%').orderBy('id').execute()
    expect(names.map((r) => r.name)).toEqual(['one', 'two', 'three', 'four', 'five'])
  })
})
