/**
 * Paired percentile bootstrap of a mean difference: resample the episodes'
 * differences (candidate - baseline) with replacement, take each resample's
 * mean, and read the 2.5th and 97.5th percentiles of those means.
 */

/** Resamples per interval (the contract's number). */
export const BOOTSTRAP_RESAMPLES = 2000

/**
 * The q-quantile (0..1) of ascending `sorted` by linear interpolation between
 * closest ranks (numpy's default `percentile` method, Hyndman & Fan type 7).
 */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const position = (sorted.length - 1) * q
  const below = Math.floor(position)
  const above = Math.min(sorted.length - 1, below + 1)
  const fraction = position - below
  return sorted[below]! + (sorted[above]! - sorted[below]!) * fraction
}

/**
 * 95% percentile-bootstrap interval of the mean of each group's `differences`.
 * Groups share the resampled indices (one draw per index serves every
 * group), so all groups must have the same length; the result is one
 * interval per group, in order. Null for fewer than two differences.
 *
 * `state` is a xoshiro128** state (see `seedState`); the draws are the same
 * as `seededUint32`'s, index = floor(draw * n / 2^32), and the state is
 * advanced in place so a later call continues the stream. The generator runs
 * inline with its state in local variables, and each draw's index is summed
 * into up to three groups at once: a closure call per draw and an index
 * buffer were each measurably slower, and this loop is most of a finalize's
 * CPU time.
 *
 * @example
 * bootstrapMeanIntervals([Float64Array.of(1, 2, 3, 4)], seedState('run/reward_mean'))
 * // [[1.75, 3.25]] (approx., depending on the draws)
 */
export function bootstrapMeanIntervals(
  groups: ReadonlyArray<Float64Array>,
  state: Int32Array,
  resamples = BOOTSTRAP_RESAMPLES,
): Array<[number, number] | null> {
  const n = groups[0]?.length ?? 0
  if (n < 2) return groups.map(() => null)
  for (const g of groups) if (g.length !== n) throw new RangeError('bootstrapMeanIntervals: every group needs the same number of pairs')
  const means = groups.map(() => new Float64Array(resamples))
  // Up to three groups at a time, drawn and summed in one pass (no index
  // buffer); a group slot without a group reads zeros. Further groups repeat
  // the pass from the same starting state, so every group sees the same indices.
  const zeros = new Float64Array(n)
  const start = Int32Array.from(state)
  for (let g = 0; g < groups.length; g += 3) {
    const a = groups[g]!, b = groups[g + 1] ?? zeros, c = groups[g + 2] ?? zeros
    const ma = means[g]!, mb = means[g + 1] ?? new Float64Array(resamples), mc = means[g + 2] ?? new Float64Array(resamples)
    const scale = n / 4294967296
    let s0 = start[0]!, s1 = start[1]!, s2 = start[2]!, s3 = start[3]!
    for (let r = 0; r < resamples; r++) {
      let sa = 0, sb = 0, sc = 0
      for (let i = 0; i < n; i++) {
        const x = Math.imul(s1, 5)
        const draw = Math.imul((x << 7) | (x >>> 25), 9) >>> 0
        const t = s1 << 9
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = (s3 << 11) | (s3 >>> 21)
        const k = Math.floor(draw * scale)
        sa += a[k]!
        sb += b[k]!
        sc += c[k]!
      }
      ma[r] = sa / n
      mb[r] = sb / n
      mc[r] = sc / n
    }
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
  }
  return means.map((m) => {
    m.sort()
    return [quantileSorted(m, 0.025), quantileSorted(m, 0.975)]
  })
}
