/**
 * `runAgainst`, the replay loop (spec, "Client library verbs"): a candidate
 * policy replays each baseline episode of a run on this machine, with the
 * next episodes' artifacts downloading meanwhile, and the per-episode metrics
 * go up in baseline order. The service never sees the policy or its weights.
 * The run itself is opened, resumed and finalized in eval-run.ts.
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
import { captureActions } from './capture-actions.ts'
import type { Episode, EpisodicClient, OpenEpisodeInput } from '../client/client.ts'
import { type ClientEnvironment, runtimeEnvironment } from '../client/environment.ts'
import { AuthError, ConfigurationError, ConflictError, EpisodicClientError, NotFoundError, ServerError, TransportError } from '../client/errors.ts'
import { type Crc32, createZlibInflate, fflateInflate, type Inflate } from './npz/index.ts'
import { replayEpisode } from './episode.ts'
import type { EpisodeResult, EvalRunHandle } from './eval-run.ts'
import { asPolicyObject, type CandidatePolicy, type PolicyObject } from './policy.ts'
import { BufferPool } from './buffer-pool.ts'
import { DEFAULT_PREFETCH, Prefetcher, type PrefetchOptions } from './prefetch.ts'
import type { Outcome } from './outcome.ts'
import { retrying, type RetryOptions } from '../client/retry.ts'

/** Callbacks and switches for `runAgainst`. */
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
  /**
   * The most bytes one baseline archive's compressed members may inflate to
   * (default: no limit; the CLI uses half the machine's memory). Past it the
   * episode fails, naming the sizes, before anything is inflated: a small
   * archive of zeros can declare gigabytes.
   */
  maxInflatedBytes?: number
  /** Where a failing policy's stack trace goes (default: console.error, i.e. standard error). */
  stderr?: (text: string) => void
  /**
   * Baseline episodes replayed at once (default 1): their downloads and policy
   * calls overlap. Results, uploads and `onEpisode` still follow baseline
   * order, identical to a sequential run. A policy that keeps state across
   * steps should key it by `context.episodeIndex` when this is above 1 (its
   * `reset` and steps of different episodes then interleave).
   */
  concurrency?: number
  /**
   * Read-ahead of the next episodes' artifacts while the current ones replay
   * (default on: at most 256 MiB and 8 episodes ahead); `false` turns it off.
   * See `PrefetchOptions`.
   */
  prefetch?: PrefetchOptions | false
  /** Upload the candidate's actions as the replay episode's `actions.npz` (see `capture-actions.ts`); default false. */
  uploadActions?: boolean
  /**
   * Calls to the service that fail on the way (a network failure, a 5xx or
   * a 429) are tried again: `attempts` in all (default 4), waiting
   * `backoffMs` (default 500) doubling. Downloads, the replay episode (opened
   * with an Idempotency-Key, so a retry never makes a second one), its
   * finalize and the result upload are all safe to repeat. Past the last
   * attempt the run stops, resumable.
   */
  retry?: RetryOptions
}

/**
 * Replays `policy` over every baseline of the run; on a recorded run, over
 * those without a result in `run.results` yet (all of them for a new run,
 * those still pending for one from `resumeRun`). A policy (or metric)
 * failure fails that episode only: its stack goes to stderr, its result row
 * is `failed`, and the loop goes on. Network failures (TransportError) that
 * outlast `retry`, and rejected uploads, stop the run; a run already completed is refused
 * (ConflictError) before anything replays.
 *
 * With `concurrency` N, N episodes replay at once (downloads and policy
 * calls); results, uploads and `onEpisode` calls still come in baseline
 * order, identical to a sequential run. The next episodes' artifacts download
 * while the current ones replay, within `prefetch`'s byte budget.
 */
export async function runAgainst(run: EvalRunHandle, candidate: CandidatePolicy, options: RunAgainstOptions = {}): Promise<EpisodeResult[]> {
  let policy: PolicyObject
  try {
    policy = asPolicyObject(candidate)
  } catch (error) {
    throw new ConfigurationError((error as Error).message)
  }
  const concurrency = options.concurrency ?? 1
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigurationError(`concurrency must be a positive integer (got ${concurrency})`)
  const dryRun = run.dryRun || Boolean(options.dryRun)
  const environment = runtimeEnvironment()
  const inflate = options.inflate ?? defaultInflate(environment)
  const verifyCrc = options.verifyCrc ?? environment.crc32 ?? true
  const stderr = options.stderr ?? ((text: string) => console.error(text))
  const { client } = run
  const ids = run.baselineEpisodeIds
  const total = ids.length
  // Positions in `ids` still to replay: a recorded run (resumed, or a second call) skips the baselines with a result.
  const answered = new Set(dryRun ? [] : run.results.map((r) => r.baselineEpisodeId))
  const todo = [...ids.keys()].filter((i) => !answered.has(ids[i]!))
  if (!dryRun && run.id !== null) {
    // A finalized run refuses results (409), but only after each episode's replay record was made: refuse up front.
    const { status } = await client.getEvalRun(run.id)
    if (status !== 'pending') throw new ConflictError(`eval run ${run.id} is already ${status}; its results cannot change (create a new run)`)
  }
  await policy.open?.()

  // Download buffers come back after each episode: enough kept for the read-ahead and the episodes replaying.
  const budget = options.prefetch === false ? 0 : options.prefetch?.bytes ?? DEFAULT_PREFETCH.bytes
  const pool = new BufferPool(budget + concurrency * 64 * 1024 * 1024)
  const retry = options.retry ?? {}
  const ahead = new Prefetcher((k) => retrying(() => fetchBaseline(client, ids[todo[k]!]!, pool), retry), (f) => f.bytes, todo.length, options.prefetch ?? {})
  const settled = todo.map(() => deferred<Replayed>())
  let next = 0
  let stopped = false
  const replayOne = async (k: number): Promise<Replayed> => {
    const i = todo[k]!
    let baseline: Episode | undefined
    let fetched: FetchedBaseline | undefined
    try {
      fetched = await ahead.take(k)
      baseline = fetched.baseline
      // --upload-actions: this episode's actions are kept as the policy returns them.
      const capture = options.uploadActions && !dryRun ? captureActions((o, c) => policy.act(o, c)) : null
      const episodePolicy: PolicyObject = capture
        ? {
          act: capture.policy,
          reset: policy.reset && ((c) => policy.reset!(c)),
          pipelineDepth: policy.pipelineDepth,
          // A whole episode at a time where the policy can (a Python policy: one frame each way), recorded as it returns.
          actEpisode: policy.actEpisode && (async (o, c) => {
            const actions = await policy.actEpisode!(o, c)
            if (Array.isArray(actions)) { for (const action of actions) capture.record(action) }
            return actions
          }),
        }
        : policy
      const replay = await replayEpisode(episodePolicy, {
        actions: fetched.actions,
        sensors: fetched.sensors,
        metadata: baseline.metadata,
        inflate,
        inPlace: true,
        verifyCrc,
        maxInflatedBytes: options.maxInflatedBytes,
        episodeIndex: i,
        baselineEpisodeId: ids[i]!,
      })
      return { baseline, replay, actions: capture?.archive() ?? null }
    } catch (error) {
      // The network and the service itself (key refused, 5xx) stop the run;
      // anything else (the policy, a bad archive, a vanished baseline) fails this episode.
      if (error instanceof TransportError || isServiceFailure(error)) return { fatal: error }
      // A dry run has no eval run, so the service never checked the baselines: an unknown or
      // foreign one is refused as createRun refuses it for a real run, not made a failed row.
      if (error instanceof BaselineNotFound) return run.dryRun ? { fatal: error.cause } : { baseline, error: failureText(error.cause) }
      return { baseline, error: failureText(error) }
    } finally {
      // The episode is over: its observations (views of these buffers) are no longer valid.
      if (fetched) {
        pool.release(fetched.actions)
        pool.release(fetched.sensors)
      }
    }
  }
  const worker = async (): Promise<void> => {
    while (!stopped && next < todo.length) {
      const k = next++
      const outcome = await replayOne(k)
      // A fatal error stops the run: no further episode starts (one would wait out the same dead network or server).
      if ('fatal' in outcome) stopped = true
      settled[k]!.resolve(outcome)
    }
  }
  const workers = Array.from({ length: Math.min(concurrency, todo.length) }, worker)
  const results: EpisodeResult[] = []
  let warnedUnpaired = false
  try {
    for (const [k, i] of todo.entries()) {
      const baselineId = ids[i]!
      const outcome = await settled[k]!.promise
      if ('fatal' in outcome) throw outcome.fatal
      const result: EpisodeResult = { index: i + 1, total, baselineEpisodeId: baselineId, status: 'done', replayEpisodeId: null, metrics: null, error: null }
      if ('error' in outcome) {
        stderr(`episode ${baselineId} failed:\n${outcome.error}`)
        result.status = 'failed'
        result.error = outcome.error
      } else {
        result.metrics = outcome.replay.metrics
        const unpaired = outcome.replay.unpaired
        if (unpaired && !warnedUnpaired) {
          warnedUnpaired = true
          stderr(
            `warning: the policy returned none of the baseline's action keys (baseline ${baselineId}: ${unpaired.baseline.join(', ')}; ` +
              `the policy: ${unpaired.policy.join(', ') || 'none'}), so its action metrics are null and nothing says how its actions differ. ` +
              "Return the recorded keys, or map a policy server's with --action-map (actionKeys).",
          )
        }
      }
      // Uploads are outside replayOne: a rejected metric blob is a ValidationError for the caller.
      if (!dryRun) {
        if ('replay' in outcome) {
          const replayEpisodeId = await recordReplayEpisode(run, outcome.baseline, outcome.replay.outcome, outcome.actions, retry)
          result.replayEpisodeId = replayEpisodeId
          await retrying(() =>
            client.uploadResult(run.id!, {
              baseline_episode_id: baselineId,
              status: 'done',
              replay_episode_id: replayEpisodeId,
              metrics: outcome.replay.metrics,
            }), retry)
        } else {
          await retrying(() => client.uploadResult(run.id!, { baseline_episode_id: baselineId, status: 'failed', error: result.error }), retry)
        }
      }
      results.push(result)
      // A recorded run's results are those the service holds: not those of a dryRun call on it.
      // One result per baseline position: replaying a dry run again replaces the earlier one.
      if (!dryRun || run.dryRun) {
        const earlier = run.results.findIndex((r) => r.index === result.index)
        if (earlier >= 0) run.results[earlier] = result
        else run.results.push(result)
      }
      await options.onEpisode?.(result)
    }
    // A resumed run's earlier rows need not all come first.
    run.results.sort((a, b) => a.index - b.index)
  } finally {
    // On a fatal error, let the episodes in progress finish before returning, so none outlives the call.
    stopped = true
    ahead.stop()
    await Promise.allSettled(workers)
  }
  return results
}

type Replayed = { baseline: Episode; replay: Awaited<ReturnType<typeof replayEpisode>>; actions: Uint8Array | null } | {
  baseline: Episode | undefined
  error: string
} | { fatal: unknown }

interface FetchedBaseline {
  baseline: Episode
  actions: Uint8Array
  sensors: Uint8Array
  bytes: number
}

async function fetchBaseline(client: EpisodicClient, id: string, pool: BufferPool): Promise<FetchedBaseline> {
  const baseline = await client.getEpisode(id).catch((error: unknown) => {
    throw error instanceof NotFoundError ? new BaselineNotFound(error) : error
  })
  const allocate = (length: number) => pool.take(length)
  const download = (kind: 'actions' | 'sensors') =>
    client.downloadArtifact(id, kind, { allocate }).catch((error: unknown) => {
      // A baseline never finalized most likely never got its files: say so, not only that one is missing.
      if (error instanceof NotFoundError && baseline.status !== 'ready') {
        throw new NotFoundError(`${error.message} (the baseline is ${baseline.status}: record its ${kind}.npz and finalize it, or leave it out)`)
      }
      throw error
    })
  const [actions, sensors] = await Promise.all([download('actions'), download('sensors')])
  return { baseline, actions, sensors, bytes: actions.byteLength + sensors.byteLength }
}

/**
 * A failed episode's error as its result row and stderr get it: the policy's
 * own errors with their stack (where in the user's code), the library's
 * (a baseline without an artifact, say) as one line.
 */
function failureText(error: unknown): string {
  if (error instanceof EpisodicClientError) return `${error.name}: ${error.message}`
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error)
}

/** The baseline episode itself (not one of its artifacts) is unknown or not the caller's. */
class BaselineNotFound extends Error {
  constructor(override readonly cause: NotFoundError) {
    super(cause.message)
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/** The metadata-only `replay` episode that records this candidate run of a baseline. */
async function recordReplayEpisode(run: EvalRunHandle, baseline: Episode, outcome: Outcome, actions: Uint8Array | null, retry: RetryOptions): Promise<string> {
  const body: OpenEpisodeInput = {
    source: 'replay',
    policy_version: run.candidatePolicyVersion,
    robot: baseline.robot,
    env_version: baseline.env_version,
    fps: baseline.fps,
    metadata: { eval_run_id: run.id, baseline_episode_id: baseline.episode_id },
    request_uploads: actions ? ['actions'] : [],
  }
  // One key per replay episode: an open retried after a lost answer gets the same episode back.
  const idempotencyKey = `replay-${crypto.randomUUID()}`
  const opened = await retrying(() => run.client.openEpisode(body, { idempotencyKey }), retry, true)
  if (actions) {
    const url = opened.upload_urls.find((u) => u.kind === 'actions')!
    await retrying(() => run.client.upload(url, actions), retry)
  }
  const known = Object.fromEntries(Object.entries(outcome).filter(([, value]) => value !== null))
  await retrying(() => run.client.finalizeEpisode(opened.episode_id, { status: 'ready', metadata: known }), retry)
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
