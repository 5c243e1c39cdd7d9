/**
 * How many paired episodes a test at two-sided 5% needs to detect the
 * observed effect with 80% power. Normal approximations, as planning
 * estimates are; rounded up.
 */
import { Z_80, Z_975 } from './normal.ts'

/**
 * Paired binary outcome (McNemar), Connor (1987), Biometrics 43:207-211:
 * n = (z_a * sqrt(pd) + z_b * sqrt(pd - delta^2))^2 / delta^2, with pd the
 * share of discordant pairs and delta the difference of proportions. Null
 * when delta is 0 (no effect to detect) or the table is empty.
 *
 * @example
 * pairedBinarySampleSize(0.3, 0.1) // 234
 */
export function pairedBinarySampleSize(discordantShare: number, delta: number): number | null {
  if (!(delta !== 0 && discordantShare > 0)) return null
  const d2 = delta * delta
  const root = Z_975 * Math.sqrt(discordantShare) + Z_80 * Math.sqrt(Math.max(0, discordantShare - d2))
  return Math.ceil((root * root) / d2)
}

/**
 * Paired numeric outcome: n = ((z_a + z_b) * sd / delta)^2 with sd the
 * standard deviation of the per-episode differences and delta their mean.
 * Null when delta is 0 or sd is not a positive finite number.
 *
 * @example
 * pairedMeanSampleSize(2, 0.5) // 126
 */
export function pairedMeanSampleSize(sd: number, delta: number): number | null {
  if (!(delta !== 0 && sd > 0 && Number.isFinite(sd) && Number.isFinite(delta))) return null
  const k = ((Z_975 + Z_80) * sd) / delta
  return Math.ceil(k * k)
}
