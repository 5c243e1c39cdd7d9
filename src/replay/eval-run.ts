/**
 * An eval run's lifecycle from the client (spec, "Client library verbs"):
 * `createRun` opens a run, `resumeRun` picks up one left pending part way,
 * and `completeRun` finalizes it and returns the server's rollup (a dry run
 * rolls up locally). `runAgainst` (run.ts) fills it in between.
 *
 * @example
 * const run = await createRun({ candidatePolicyVersion: 'v2', baselineEpisodeIds: ids })
 * await runAgainst(run, policy)
 * const { summary } = await completeRun(run)
 */
import { EpisodicClient, type FinalizedEvalRun } from '../client/client.ts'
import type { ClientOptions } from '../client/config.ts'
import { ConfigurationError, ConflictError, ValidationError } from '../client/errors.ts'
import { EpisodicError } from '../errors.ts'
import { CreateEvalRunBody } from '../eval/schemas.ts'
import { parseBodyValue } from '../http/body.ts'
import type { MetricBlob } from '../eval/metric-blob.ts'
import { DEFAULT_MAX_OOD_ACTION_SHARE, DEFAULT_MIN_EPISODES, rollup, type RollupSummary } from '../eval/rollup.ts'

/**
 * What `createRun` needs: the candidate's version, the baseline episodes to
 * replay, and where to record the run.
 *
 * @example
 * const run = await createRun({ candidatePolicyVersion: 'v2', baselineEpisodeIds: ids, name: 'v2 vs prod' })
 */
export interface CreateRunOptions {
  /** The version of the policy under test; it names the run when `name` is not given. */
  candidatePolicyVersion: string
  /** The episodes to replay, in order; each must be the caller's. */
  baselineEpisodeIds: readonly string[]
  /** The version that recorded the baselines, for the portal and the rollup. */
  baselinePolicyVersion?: string
  /** The run's display name (default: the candidate's version). */
  name?: string
  /** Hashes and build links only: shown to everyone in the organization, capped at 64 KiB. */
  metadata?: Record<string, unknown>
  /** A client, or options to build one (default: environment / credentials file). */
  client?: EpisodicClient | ClientOptions
  /** Create no run on the server (`runAgainst` then only fetches and computes). */
  dryRun?: boolean
  /** Done episodes needed for a `ship` verdict: an integer 1..10000 (server default 10). */
  minEpisodes?: number
  /** Mean OOD action share above which the verdict is `hold`: 0..1 (server default 0.25). */
  maxOodActionShare?: number
}

/** A handle on an eval run (or, with `dryRun`, on a local one with `id` null). */
export interface EvalRunHandle {
  /** The eval run's id (null for a dry run). */
  id: string | null
  /** The run's display name. */
  name: string
  /** The version of the policy under test. */
  candidatePolicyVersion: string
  /** The version that recorded the baselines, if given. */
  baselinePolicyVersion: string | null
  /** The baseline episodes, in replay order. */
  baselineEpisodeIds: string[]
  /** The client the run talks to the service with. */
  client: EpisodicClient
  /** The run's portal page (null for a dry run). */
  portalUrl: string | null
  /** True when nothing is created on the server. */
  dryRun: boolean
  /** The verdict's thresholds for this run (as the server stored them). */
  minEpisodes: number
  /** Mean OOD action share above which the verdict is `hold`. */
  maxOodActionShare: number
  /** Results of `runAgainst` so far, in baseline order. */
  results: EpisodeResult[]
}

/** The outcome of replaying one baseline episode, as `runAgainst` reports it. */
export interface EpisodeResult {
  /** 1-based position and the total, for progress output. */
  index: number
  /** How many baseline episodes the run replays. */
  total: number
  /** The baseline episode that was replayed. */
  baselineEpisodeId: string
  /** `done` when the metrics were computed; `failed` when the episode raised an error. */
  status: 'done' | 'failed'
  /** The episode recording the candidate's actions, when one was uploaded. */
  replayEpisodeId: string | null
  /** The per-episode metric blob (null when failed). */
  metrics: MetricBlob | null
  /** The error's stack or message (null when done). */
  error: string | null
}

/** Opens an eval run; throws ConfigurationError before any request when inputs are missing. */
export async function createRun(options: CreateRunOptions): Promise<EvalRunHandle> {
  if (!options || typeof options.candidatePolicyVersion !== 'string' || options.candidatePolicyVersion.trim() === '') {
    throw new ConfigurationError('candidatePolicyVersion is required')
  }
  if (!Array.isArray(options.baselineEpisodeIds) || options.baselineEpisodeIds.length === 0) {
    throw new ConfigurationError('baselineEpisodeIds must list at least one baseline episode')
  }
  const { minEpisodes, maxOodActionShare } = options
  if (minEpisodes !== undefined && !(Number.isInteger(minEpisodes) && minEpisodes >= 1 && minEpisodes <= 10000)) {
    throw new ConfigurationError(`minEpisodes must be an integer from 1 to 10000, got ${minEpisodes}`)
  }
  if (maxOodActionShare !== undefined && !(typeof maxOodActionShare === 'number' && maxOodActionShare >= 0 && maxOodActionShare <= 1)) {
    throw new ConfigurationError(`maxOodActionShare must be a number from 0 to 1, got ${maxOodActionShare}`)
  }
  const client = options.client instanceof EpisodicClient ? options.client : await EpisodicClient.connect(options.client)
  const base = {
    candidatePolicyVersion: options.candidatePolicyVersion,
    baselinePolicyVersion: options.baselinePolicyVersion ?? null,
    baselineEpisodeIds: [...options.baselineEpisodeIds],
    client,
    results: [] as EpisodeResult[],
  }
  const body = {
    candidate_policy_version: options.candidatePolicyVersion,
    baseline_episode_ids: base.baselineEpisodeIds,
    baseline_policy_version: options.baselinePolicyVersion,
    name: options.name,
    metadata: options.metadata,
    min_episodes: minEpisodes,
    max_ood_action_share: maxOodActionShare,
  }
  if (options.dryRun) {
    // What the service would refuse (a repeated baseline, a version too long), a dry run refuses too.
    try {
      parseBodyValue(CreateEvalRunBody, body)
    } catch (error) {
      throw error instanceof EpisodicError ? new ValidationError(error.message) : error
    }
    const thresholds = { minEpisodes: minEpisodes ?? DEFAULT_MIN_EPISODES, maxOodActionShare: maxOodActionShare ?? DEFAULT_MAX_OOD_ACTION_SHARE }
    return { ...base, ...thresholds, id: null, name: options.name ?? options.candidatePolicyVersion, portalUrl: null, dryRun: true }
  }
  const created = await client.createEvalRun(body)
  const thresholds = {
    minEpisodes: created.min_episodes ?? minEpisodes ?? DEFAULT_MIN_EPISODES,
    maxOodActionShare: created.max_ood_action_share ?? maxOodActionShare ?? DEFAULT_MAX_OOD_ACTION_SHARE,
  }
  return { ...base, ...thresholds, id: created.eval_run_id, name: created.name, portalUrl: client.portalUrl(created.eval_run_id), dryRun: false }
}

/** What `resumeRun` needs: the pending run to go on with. */
export interface ResumeRunOptions {
  /** The eval run to go on with; it must still be `pending`. */
  evalRunId: string
  /** A client, or options to build one (default: environment / credentials file). */
  client?: EpisodicClient | ClientOptions
}

/**
 * A handle on a pending eval run that an earlier `runAgainst` left unfinished
 * (interrupted, or stopped by a network failure): the rows already uploaded
 * come back as `results`, and `runAgainst` replays only the baselines still
 * pending. A completed run is refused (ConflictError), an unknown or foreign
 * one is a NotFoundError.
 *
 * @example
 * const run = await resumeRun({ evalRunId })
 * await runAgainst(run, policy) // the baselines without a result yet
 * const { summary } = await completeRun(run)
 */
export async function resumeRun(options: ResumeRunOptions): Promise<EvalRunHandle> {
  if (!options || typeof options.evalRunId !== 'string' || options.evalRunId.trim() === '') throw new ConfigurationError('evalRunId is required')
  const client = options.client instanceof EpisodicClient ? options.client : await EpisodicClient.connect(options.client)
  const found = await client.getEvalRun(options.evalRunId)
  if (found.status !== 'pending') {
    throw new ConflictError(`eval run ${found.eval_run_id} is already ${found.status}; its results cannot change (create a new run)`)
  }
  const total = found.baseline_episode_ids.length
  const results: EpisodeResult[] = []
  for (const [i, row] of found.results.entries()) {
    if (row.status !== 'done' && row.status !== 'failed') continue
    results.push({
      index: i + 1,
      total,
      baselineEpisodeId: row.baseline_episode_id,
      status: row.status,
      replayEpisodeId: row.replay_episode_id,
      metrics: row.metrics as MetricBlob | null,
      error: row.error,
    })
  }
  return {
    id: found.eval_run_id,
    name: found.name,
    candidatePolicyVersion: found.candidate_policy_version,
    baselinePolicyVersion: found.baseline_policy_version,
    baselineEpisodeIds: [...found.baseline_episode_ids],
    client,
    portalUrl: client.portalUrl(found.eval_run_id),
    dryRun: false,
    minEpisodes: found.min_episodes,
    maxOodActionShare: found.max_ood_action_share,
    results,
  }
}

/**
 * Finalizes the run and returns the server's body; `summary` is the rollup.
 * A dry run rolls up locally with the server's own rollup code, its
 * bootstrap seeded from the candidate version and the baseline ids (there is
 * no run id), so the same dry run always prints the same intervals.
 */
export async function completeRun(run: EvalRunHandle): Promise<FinalizedEvalRun | { eval_run_id: null; status: 'dry_run'; summary: RollupSummary }> {
  if (run.dryRun || run.id === null) {
    const rows = run.results.map((r) => ({ status: r.status, metrics: r.metrics }))
    const seed = `dry-run/${run.candidatePolicyVersion}/${run.baselineEpisodeIds.join(',')}`
    return { eval_run_id: null, status: 'dry_run', summary: rollup(rows, { seed, minEpisodes: run.minEpisodes, maxOodActionShare: run.maxOodActionShare }) }
  }
  return await run.client.finalizeEvalRun(run.id)
}
