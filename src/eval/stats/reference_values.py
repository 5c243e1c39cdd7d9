"""Independent reference values for src/eval/stats/*.test.ts (scipy / numpy).

Run `python3 src/eval/stats/reference_values.py` and compare with the
constants stated in the tests. Nothing here imports the TypeScript code: the
PRNG and the bootstrap are re-implemented from their definitions.
"""
import math
import numpy as np
from scipy.stats import binom, norm

Z = norm.ppf(0.975)

def wilson(x, n):
    # Wilson (1927) score interval, written from the quadratic's roots.
    p = x / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)

def newcombe10(a, b, c, d):
    # Newcombe 1998 method 10; p1 = (a+b)/n is the first measure, p2 = (a+c)/n the second.
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n)
    l2, u2 = wilson(a + c, n)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if margins > 0:
        cross = a * d - b * c
        phi = (cross - n / 2) / math.sqrt(margins) if cross > n / 2 else (cross / math.sqrt(margins) if cross < 0 else 0.0)
    dlt = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    eps = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return p1 - p2 - dlt, p1 - p2 + eps

def midp(b, c):
    m, k = b + c, min(b, c)
    return 1.0 if m == 0 else min(1.0, 2 * binom.cdf(k, m, 0.5) - binom.pmf(k, m, 0.5))

M32 = 0xFFFFFFFF

def fnv1a(text):
    h = 0x811C9DC5
    data = text.encode('utf-16-le')
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & M32
    return h

def rng(seed):
    s = fnv1a(seed)
    state = []
    for _ in range(4):
        s = (s + 0x9E3779B9) & M32
        z = s
        z = ((z ^ (z >> 16)) * 0x85EBCA6B) & M32
        z = ((z ^ (z >> 13)) * 0xC2B2AE35) & M32
        state.append((z ^ (z >> 16)) & M32)
    rotl = lambda x, k: ((x << k) | (x >> (32 - k))) & M32
    s0, s1, s2, s3 = state
    while True:
        out = (rotl((s1 * 5) & M32, 7) * 9) & M32
        t = (s1 << 9) & M32
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11)
        yield out

def bootstrap(diffs, seed, resamples=2000):
    diffs = np.asarray(diffs, dtype=np.float64)
    n = len(diffs)
    draw = rng(seed)
    means = np.empty(resamples)
    for r in range(resamples):
        idx = np.array([(next(draw) * n) >> 32 for _ in range(n)])
        means[r] = diffs[idx].sum() / n
    return np.percentile(means, 2.5), np.percentile(means, 97.5)

if __name__ == '__main__':
    print('wilson', [wilson(x, n) for x, n in [(0, 10), (3, 10), (10, 10), (81, 263)]])
    print('newcombe', [newcombe10(*t) for t in [(1, 1, 7, 12), (59, 6, 16, 80), (12, 9, 2, 7), (0, 0, 0, 5), (3, 0, 0, 0), (5, 5, 0, 0)]])
    print('midp', [midp(b, c) for b, c in [(1, 7), (6, 16), (0, 0), (3, 3), (0, 12), (480, 520)]])
    g = rng('seed'); print('xoshiro', [next(g) for _ in range(5)])
    print('fnv1a', [fnv1a(s) for s in ['', 'a', 'eval-run']])
    print('bootstrap', bootstrap([0.5, -1.0, 2.0, 3.5, 0.0, 1.25, -0.75, 2.5], 'run-1/reward_mean'))
    print('quantile', np.percentile([3.0, 1.0, 4.0, 1.5, 9.0], [2.5, 50, 97.5]))
    print('sample sizes', math.ceil((Z * math.sqrt(0.3) + norm.ppf(0.8) * math.sqrt(0.3 - 0.01)) ** 2 / 0.01),
          math.ceil(((Z + norm.ppf(0.8)) * 2 / 0.5) ** 2))
