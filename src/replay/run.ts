/**
 * The replay regression harness verbs (spec, "Client library verbs"):
 * `createRun` opens an eval run, `runAgainst` replays a candidate policy over
 * each baseline episode on this machine and uploads per-episode metrics, and
 * `completeRun` finalizes the run and returns the server's rollup. The
 * service never sees the policy or its weights.
 *
 * Unlike the Python reference, these are async functions (JavaScript has no
 * blocking I/O); call them with `await`, from anywhere.
 *
 * @example
 * const run = await createRun({ candidatePolicyVersion: 'v2', baselineEpisodeIds: ids })
 * await runAgainst(run, (obs) => ({ '/joint_states/position': myModel(obs) }))
 * const { summary } = await completeRun(run)
 * console.log(summary.recommend) // 'ship' | 'hold'
 */
import { EpisodicClient, type Episode, type FinalizedEvalRun } from '../client/client.ts'
import type { ClientOptions } from '../client/config.ts'
import { runtimeEnvironment, type ClientEnvironment } from '../client/environment.ts'
import { AuthError, ConfigurationError, ServerError, TransportError } from '../client/errors.ts'
import type { MetricBlob } from '../eval/metric-blob.ts'
import { rollup, type RollupSummary } from '../eval/rollup.ts'
import { createZlibInflate, fflateInflate, type Crc32, type Inflate } from './npz/index.ts'
import { replayEpisode, type Policy } from './episode.ts'
import type { Outcome } from './outcome.ts'

export interface CreateRunOptions {
  candidatePolicyVersion: string
  baselineEpisodeIds: readonly string[]
  baselinePolicyVersion?: string
  name?: string
  /** Hashes and build links only: shown to everyone in the organization, capped at 64 KiB. */
  metadata?: Record<string, unknown>
  /** A client, or options to build one (default: environment / credentials file). */
  client?: EpisodicClient | ClientOptions
  /** Create no run on the server (`runAgainst` then only fetches and computes). */
  dryRun?: boolean
}

/** A handle on an eval run (or, with `dryRun`, on a local one with `id` null). */
export interface EvalRunHandle {
  id: string | null
  name: string
  candidatePolicyVersion: string
  baselinePolicyVersion: string | null
  baselineEpisodeIds: string[]
  client: EpisodicClient
  /** The run's portal page (null for a dry run). */
  portalUrl: string | null
  dryRun: boolean
  /** Results of `runAgainst` so far, in baseline order. */
  results: EpisodeResult[]
}

export interface EpisodeResult {
  /** 1-based position and the total, for progress output. */
  index: number
  total: number
  baselineEpisodeId: string
  status: 'done' | 'failed'
  replayEpisodeId: string | null
  metrics: MetricBlob | null
  error: string | null
}

export interface RunAgainstOptions {
  /** Called after each baseline episode completes (done or failed). */
  onEpisode?: (result: EpisodeResult) => void | Promise<void>
  /** Fetch and compute only: no replay episode, no result upload. */
  dryRun?: boolean
  /** The .npz inflater (default: node:zlib where the runtime has it, else fflate). */
  inflate?: Inflate
  /**
   * Check every archive member's CRC-32 before replaying it, as numpy does:
   * a corrupt baseline then fails its episode (naming the member) instead of
   * feeding the policy wrong data. Default on, with node:zlib's `crc32` where
   * the runtime has it (~4 GB/s here), else the built-in one (~600 MB/s);
   * `false` skips it.
   */
  verifyCrc?: boolean | Crc32
  /** Where a failing policy's stack trace goes (default: console.error, i.e. standard error). */
  stderr?: (text: string) => void
}

/** Opens an eval run; throws ConfigurationError before any request when inputs are missing. */
export async function createRun(options: CreateRunOptions): Promise<EvalRunHandle> {
  if (!options || typeof options.candidatePolicyVersion !== 'string' || options.candidatePolicyVersion.trim() === '') {
    throw new ConfigurationError('candidatePolicyVersion is required')
  }
  if (!Array.isArray(options.baselineEpisodeIds) || options.baselineEpisodeIds.length === 0) {
    throw new ConfigurationError('baselineEpisodeIds must list at least one baseline episode')
  }
  const client = options.client instanceof EpisodicClient ? options.client : await EpisodicClient.connect(options.client)
  const base = {
    candidatePolicyVersion: options.candidatePolicyVersion,
    baselinePolicyVersion: options.baselinePolicyVersion ?? null,
    baselineEpisodeIds: [...options.baselineEpisodeIds],
    client,
    results: [] as EpisodeResult[],
  }
  if (options.dryRun) {
    return { ...base, id: null, name: options.name ?? options.candidatePolicyVersion, portalUrl: null, dryRun: true }
  }
  const created = await client.createEvalRun({
    candidate_policy_version: options.candidatePolicyVersion,
    baseline_episode_ids: base.baselineEpisodeIds,
    baseline_policy_version: options.baselinePolicyVersion,
    name: options.name,
    metadata: options.metadata,
  })
  return { ...base, id: created.eval_run_id, name: created.name, portalUrl: client.portalUrl(created.eval_run_id), dryRun: false }
}

/**
 * Replays `policy` over every baseline of the run, in order. A policy (or
 * metric) failure fails that episode only: its stack goes to stderr, its
 * result row is `failed`, and the loop goes on. Network failures
 * (TransportError) and rejected uploads stop the run.
 */
export async function runAgainst(run: EvalRunHandle, policy: Policy, options: RunAgainstOptions = {}): Promise<EpisodeResult[]> {
  if (typeof policy !== 'function') throw new ConfigurationError('policy must be a function (observation) => action')
  const dryRun = run.dryRun || Boolean(options.dryRun)
  const environment = runtimeEnvironment()
  const inflate = options.inflate ?? defaultInflate(environment)
  const verifyCrc = options.verifyCrc ?? environment.crc32 ?? true
  const stderr = options.stderr ?? ((text: string) => console.error(text))
  const { client } = run
  const total = run.baselineEpisodeIds.length
  const results: EpisodeResult[] = []
  for (const [i, baselineId] of run.baselineEpisodeIds.entries()) {
    const result: EpisodeResult = { index: i + 1, total, baselineEpisodeId: baselineId, status: 'done', replayEpisodeId: null, metrics: null, error: null }
    let replayed: Awaited<ReturnType<typeof replayEpisode>> | undefined
    let baseline: Episode | undefined
    try {
      baseline = await client.getEpisode(baselineId)
      const [actions, sensors] = await Promise.all([client.downloadArtifact(baselineId, 'actions'), client.downloadArtifact(baselineId, 'sensors')])
      replayed = await replayEpisode(policy, { actions, sensors, metadata: baseline.metadata, inflate, inPlace: true, verifyCrc })
      result.metrics = replayed.metrics
    } catch (error) {
      // The network and the service itself (key refused, 5xx) stop the run;
      // anything else (the policy, a bad archive, a vanished baseline) fails this episode.
      if (error instanceof TransportError || isServiceFailure(error)) throw error
      const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error)
      stderr(`episode ${baselineId} failed:\n${text}`)
      result.status = 'failed'
      result.error = text
    }
    // Uploads are outside the try: a rejected metric blob is a ValidationError for the caller.
    if (!dryRun) {
      if (replayed && baseline) {
        result.replayEpisodeId = await recordReplayEpisode(run, baseline, replayed.outcome)
        await client.uploadResult(run.id!, { baseline_episode_id: baselineId, status: 'done', replay_episode_id: result.replayEpisodeId, metrics: replayed.metrics })
      } else {
        await client.uploadResult(run.id!, { baseline_episode_id: baselineId, status: 'failed', error: result.error })
      }
    }
    results.push(result)
    run.results.push(result)
    await options.onEpisode?.(result)
  }
  return results
}

/** Finalizes the run and returns the server's body; `summary` is the rollup. A dry run rolls up locally. */
export async function completeRun(run: EvalRunHandle): Promise<FinalizedEvalRun | { eval_run_id: null; status: 'dry_run'; summary: RollupSummary }> {
  if (run.dryRun || run.id === null) {
    return { eval_run_id: null, status: 'dry_run', summary: rollup(run.results.map((r) => ({ status: r.status, metrics: r.metrics }))) }
  }
  return run.client.finalizeEvalRun(run.id)
}

/** The metadata-only `replay` episode that records this candidate run of a baseline. */
async function recordReplayEpisode(run: EvalRunHandle, baseline: Episode, outcome: Outcome): Promise<string> {
  const opened = await run.client.openEpisode({
    source: 'replay',
    policy_version: run.candidatePolicyVersion,
    robot: baseline.robot,
    env_version: baseline.env_version,
    fps: baseline.fps,
    metadata: { eval_run_id: run.id, baseline_episode_id: baseline.episode_id },
    request_uploads: [],
  })
  const known = Object.fromEntries(Object.entries(outcome).filter(([, value]) => value !== null))
  await run.client.finalizeEpisode(opened.episode_id, { status: 'ready', metadata: known })
  return opened.episode_id
}

/** Errors from the service itself (key refused, 5xx) stop the run; they are not the policy's. */
function isServiceFailure(error: unknown): boolean {
  return error instanceof AuthError || error instanceof ServerError
}

function defaultInflate(environment: ClientEnvironment): Inflate {
  const zlib = environment.inflateRawSync
  return zlib ? createZlibInflate(zlib) : fflateInflate
}
