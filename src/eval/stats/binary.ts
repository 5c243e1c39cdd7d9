/**
 * Statistics for a paired binary metric (success, any collision): each
 * episode gives one 0/1 value for the candidate and one for the baseline,
 * summed up as the four cells of a paired 2x2 table.
 */
import { Z_975 } from './normal.ts'

/**
 * A paired 2x2 table: `both` episodes where candidate and baseline are 1,
 * `candidateOnly` where only the candidate is 1, `baselineOnly` where only
 * the baseline is, `neither` where both are 0.
 */
export interface PairedTable {
  both: number
  candidateOnly: number
  baselineOnly: number
  neither: number
}

/** Wilson score interval for x successes in n trials (n > 0), without continuity correction. */
export function wilson(x: number, n: number, z = Z_975): [number, number] {
  const z2 = z * z
  const denominator = n + z2
  const centre = (x + z2 / 2) / denominator
  const half = (z * Math.sqrt((x * (n - x)) / n + z2 / 4)) / denominator
  return [Math.max(0, centre - half), Math.min(1, centre + half)]
}

/**
 * 95% interval for the difference of paired proportions p_candidate -
 * p_baseline: Newcombe (1998), "Improved confidence intervals for the
 * difference between binomial proportions based on paired data", Statistics
 * in Medicine 17:2635-2650, method 10 (square-and-add of the two Wilson
 * intervals with the correlation term phi, itself corrected as Newcombe
 * gives it: `ad - bc` above n/2 loses n/2, between 0 and n/2 counts as 0,
 * and a zero margin makes phi 0). Null for an empty table.
 *
 * @example
 * newcombePaired({ both: 1, candidateOnly: 1, baselineOnly: 7, neither: 12 }) // [-0.5069, -0.0256] (approx.)
 */
export function newcombePaired(table: PairedTable, z = Z_975): [number, number] | null {
  const { both: a, candidateOnly: b, baselineOnly: c, neither: d } = table
  const n = a + b + c + d
  if (n === 0) return null
  const x1 = a + b // candidate successes
  const x2 = a + c // baseline successes
  const p1 = x1 / n
  const p2 = x2 / n
  const [l1, u1] = wilson(x1, n, z)
  const [l2, u2] = wilson(x2, n, z)
  let phi = 0
  const margins = x1 * (n - x1) * x2 * (n - x2)
  if (margins > 0) {
    const cross = a * d - b * c
    if (cross > n / 2) phi = (cross - n / 2) / Math.sqrt(margins)
    else if (cross < 0) phi = cross / Math.sqrt(margins)
  }
  const estimate = p1 - p2
  const lower = estimate - Math.sqrt(Math.max(0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
  const upper = estimate + Math.sqrt(Math.max(0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
  return [Math.max(-1, lower), Math.min(1, upper)]
}

/**
 * Two-sided exact mid-p McNemar test over the discordant pairs (Fagerland,
 * Lydersen & Laake 2013): with m = b + c discordant pairs and k = min(b, c),
 * p = 2 * P(X <= k) - P(X = k) for X ~ Binomial(m, 1/2), capped at 1; 1
 * when there is no discordant pair.
 *
 * @example
 * mcnemarMidP(1, 7) // 0.0390625
 */
export function mcnemarMidP(candidateOnly: number, baselineOnly: number): number {
  const m = candidateOnly + baselineOnly
  if (m === 0) return 1
  const k = Math.min(candidateOnly, baselineOnly)
  // Binomial(m, 1/2) probabilities through logs, so m in the thousands neither overflows nor underflows early.
  const logHalf = m * Math.log(0.5)
  let logCoefficient = 0 // log C(m, 0)
  let cumulative = 0
  let atK = 0
  for (let i = 0; i <= k; i++) {
    if (i > 0) logCoefficient += Math.log((m - i + 1) / i)
    const p = Math.exp(logCoefficient + logHalf)
    cumulative += p
    if (i === k) atK = p
  }
  return Math.min(1, 2 * cumulative - atK)
}
