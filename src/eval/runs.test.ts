/**
 * Finalize reads a dozen fields of each metric blob as text instead of whole
 * blobs; its summary must be exactly `rollup` over the blobs themselves (the
 * dry run's path), on every database kind.
 */
import type { Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NodeSha256 } from '../../adapters/node/sha256.ts'
import { DATABASES } from '../../test/helpers/databases.ts'
import { openTestDatabase } from '../../test/helpers/pglite.ts'
import { createTempDatabase } from '../../test/helpers/postgres.ts'
import { createClient } from '../admin/admin.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { openDatabase } from '../db/open.ts'
import type { Database } from '../db/schema.ts'
import { insertEpisodes } from '../episodes/rows.ts'
import type { MetricBlob } from './metric-blob.ts'
import { rollup, type RollupRow } from './rollup.ts'
import { createEvalRun, finalizeEvalRun, uploadResult } from './runs.ts'

const now = new Date('2026-11-23T12:00:00Z')
const source = { success: 'reported', reward_total: 'recorded', collision_count: 'reported', time_to_goal_s: 'recorded' } as const

/** Blobs with the values whose text could go astray: extremes, negatives, zero, nulls, absent fields and labels. */
function blob(i: number): MetricBlob | null {
  if (i === 3) return null
  const b: MetricBlob = {
    success_baseline: i % 3 === 0 ? null : i % 2 === 0,
    success_candidate: i % 4 > 0,
    reward_total_baseline: [1e308, -2.5e-300, 0, 0.1, -7, 123456789.125][i % 6]!,
    reward_total_candidate: i * 0.37 - 1.1,
    collision_count_baseline: i % 5,
    collision_count_candidate: i % 7 === 0 ? null : i % 2,
    time_to_goal_s_baseline: 20 + i / 3,
    time_to_goal_s_candidate: i % 9 === 0 ? null : 19.5 + i / 7,
    ood_action_share_baseline: i % 2 === 0 ? null : 0.01 * i,
    ood_action_share_candidate: 0.02 * (i % 10),
    action_l2_mean: i % 8 === 0 ? null : 0.1 * i,
    action_l2_normalized_mean: 1e-9 * i,
    nonfinite_steps: 0,
  }
  if (i % 4 !== 1) b.outcome_source = i % 4 === 2 ? { success: 'recorded' } : source
  return b
}

describe.each(DATABASES)('finalize on %s', (kind) => {
  let db: Kysely<Database>
  let drop = async () => {}
  let clientId: string
  beforeAll(async () => {
    if (kind === 'pglite') db = await openTestDatabase()
    else {
      const temp = await createTempDatabase()
      drop = temp.drop
      db = await openDatabase({ url: temp.url, max: 2 })
      await migrateToLatest(db)
    }
    clientId = (await createClient({ db, sha256: NodeSha256 }, 'runs-test')).id
  }, 60_000)
  afterAll(async () => {
    await db?.destroy()
    await drop()
  })

  it('gives the summary `rollup` gives over the blobs themselves', async () => {
    const ids = Array.from({ length: 40 }, () => crypto.randomUUID())
    await insertEpisodes(
      db,
      ids.map((id) => ({
        id,
        clientId,
        name: null,
        source: 'real' as const,
        robot: null,
        policyVersion: 'v1',
        envVersion: null,
        gitSha: null,
        seed: null,
        fps: null,
        metadata: {},
        artifacts: [],
        now,
      })),
    )
    const runId = crypto.randomUUID()
    const options = { minEpisodes: 5, maxOodActionShare: 0.3 }
    const base = { id: runId, clientId, candidatePolicyVersion: 'v2', baselinePolicyVersion: 'v1', name: null, metadata: {} }
    await createEvalRun(db, { ...base, baselineEpisodeIds: ids, ...options, now })
    const rows: RollupRow[] = []
    for (const [i, id] of ids.entries()) {
      // Row 37 stays pending (it becomes skipped); every 13th fails.
      if (i === 37) {
        rows.push({ status: 'skipped', metrics: null })
        continue
      }
      const status = i % 13 === 12 ? 'failed' as const : 'done' as const
      const metrics = status === 'failed' ? null : blob(i)
      await uploadResult(db, clientId, runId, { baselineEpisodeId: id, status, replayEpisodeId: null, error: null, metrics, now })
      rows.push({ status, metrics })
    }
    const { summary } = await finalizeEvalRun(db, clientId, runId, now)
    expect(summary.reward_mean.n).toBeGreaterThan(20)
    expect(summary.episodes).toEqual({ total: 40, done: 36, failed: 3, skipped: 1, pending: 0 })
    expect(JSON.stringify(summary)).toBe(JSON.stringify(rollup(rows, { seed: runId, ...options })))
  })
})
