/**
 * `episodic/replay`: the replay regression harness (createRun, runAgainst,
 * completeRun), the policy types, the NPZ reader/writer and the metrics.
 *
 * @example
 * import { createRun, runAgainst, completeRun } from 'episodic/replay'
 */
export { createRun, runAgainst, completeRun, type CreateRunOptions, type EvalRunHandle, type EpisodeResult, type RunAgainstOptions } from './run.ts'
export { recordEpisode, type RecordEpisodeInput } from './record.ts'
export { replayEpisode, type Action, type Observation, type Policy, type EpisodeInput } from './episode.ts'
export { baselineOutcome, candidateOutcome, type Outcome } from './outcome.ts'
export { CandidateRecorder, actionMetrics, type ActionMetrics, type ActionValue } from './metrics.ts'
export * from './npz/index.ts'
export { rollup, METRICS, type RollupSummary, type MetricSummary } from '../eval/rollup.ts'
export type { MetricBlob } from '../eval/metric-blob.ts'
export * from '../client/errors.ts'
export { EpisodicClient } from '../client/client.ts'
