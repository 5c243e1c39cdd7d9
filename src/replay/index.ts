/**
 * `episodic/replay`: the replay regression harness (createRun, runAgainst,
 * completeRun), the policy types, Python and policy-server policies
 * (pythonPolicy, websocketPolicy), the NPZ reader/writer and the metrics. A
 * run replays recorded episodes against a candidate policy, uploads one
 * metric blob per episode and finalizes into a rollup with a verdict.
 *
 * @example
 * import { createRun, runAgainst, completeRun } from 'episodic/replay'
 * const run = await createRun({ candidatePolicyVersion: 'v2', baselineEpisodeIds: ids })
 * await runAgainst(run, (obs) => ({ '/joint_states/position': myModel(obs) }))
 * const { summary } = await completeRun(run)
 * console.log(summary.verdict, summary.reasons) // 'ship' | 'hold' | 'inconclusive'
 *
 * @module
 */
export { completeRun, createRun, type CreateRunOptions, type EpisodeResult, type EvalRunHandle, resumeRun, type ResumeRunOptions } from './eval-run.ts'
export { runAgainst, type RunAgainstOptions } from './run.ts'
export type { RetryOptions } from '../client/retry.ts'
export { recordEpisode, type RecordEpisodeInput } from './record.ts'
export { type EpisodeInput, type ReplayedEpisode, replayEpisode } from './episode.ts'
export type { Action, CandidatePolicy, EpisodeContext, Observation, Policy, PolicyObject, ReportedOutcome, StepContext } from './policy.ts'
export type { PrefetchOptions } from './prefetch.ts'
export { PolicyTimeout, timedPolicy } from './timed-policy.ts'
export { type PythonPolicy, pythonPolicy, PythonPolicyError, type PythonPolicyInfo, type PythonPolicyOptions, PythonPolicyTimeout } from './python/policy.ts'
export type { BridgeProcess, ChildLike, ChildProcessModule, SpawnBridge, StreamLike } from './python/process.ts'
export {
  PolicyServerError,
  PolicyServerTimeout,
  type WebSocketConstructor,
  type WebSocketLike,
  type WebsocketPolicy,
  websocketPolicy,
  type WebsocketPolicyOptions,
} from './websocket/policy.ts'
export { type KeyMap, parseKeyMap } from './websocket/key-map.ts'
export { baselineOutcome, candidateOutcome, type Outcome, type OutcomeSource, outcomeSource } from './outcome.ts'
export { type ActionMetrics, actionMetrics, type ActionValue, CandidateRecorder } from './metrics.ts'
export { MetricsError } from './errors.ts'
export * from './npz/index.ts'
export {
  type EpisodeCounts,
  type MetricColumn,
  type MetricName,
  METRICS,
  type MetricSpec,
  type MetricSummary,
  rollup,
  type RollupOptions,
  type RollupRow,
  type RollupSummary,
  type Verdict,
} from '../eval/rollup.ts'
export type { MetricBlob, MetricOutcomeSource } from '../eval/metric-blob.ts'
export * from '../client/errors.ts'
export { EpisodicClient } from '../client/client.ts'
