/**
 * Standard normal quantiles the statistics need, as constants (from
 * scipy.stats.norm.ppf): a 95% two-sided interval and 80% power.
 */

/** z for a two-sided 95% interval: norm.ppf(0.975). */
export const Z_975 = 1.959963984540054

/** z for 80% power: norm.ppf(0.8). */
export const Z_80 = 0.8416212335729143
