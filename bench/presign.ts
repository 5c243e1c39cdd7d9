/**
 * bench/presign: upload URLs per second through the episodic presigner
 * (src/storage/sigv4.ts), next to smithy's presign of the same URLs in the same run,
 * with either SHA-256 the issue names: @aws-crypto/sha256-js (the core's
 * default) and node:crypto (what the Node adapter injects). An open signs
 * three URLs, one per artifact, so the loop does too.
 *
 *   npx tsx bench/presign.ts   (BENCH_PRESIGN_URLS=30000 BENCH_ROUNDS=5)
 */
import { Sha256 } from '@aws-crypto/sha256-js'
import { NodeSha256 } from '../adapters/node/sha256.ts'
import type { Sha256Ctor } from '../src/crypto.ts'
import { createPresigner } from '../src/storage/sigv4.ts'
import { bareSmithy } from '../test/helpers/smithy.ts'
import { fmt, median } from './lib.ts'

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }
const ORIGIN = 'https://acct.r2.cloudflarestorage.com/episodes'
const ARTIFACTS = [['video.mp4', 'video/mp4'], ['sensors.npz', 'application/octet-stream'], ['actions.npz', 'application/octet-stream']] as const

type Sign = (url: string, contentType: string, now: Date) => Promise<unknown>

/** The episodic presigner. */
function ours(sha256: Sha256Ctor): Sign {
  const presigner = createPresigner({ ...credentials, region: 'auto', sha256 })
  return (url, contentType, now) => presigner.presign({ method: 'PUT', url, contentType, now, expiresInSeconds: 1800 })
}

/** Smithy's whole presign of the same request, with the same options. */
function smithy(sha256: Sha256Ctor): Sign {
  const presign = bareSmithy(credentials, sha256)
  return (url, contentType, now) => presign({ method: 'PUT', url, contentType, now, expiresInSeconds: 1800 })
}

/** URLs per second over `count` URLs, three per episode, with the clock running. */
async function rate(sign: Sign, count: number): Promise<number> {
  const start = performance.now()
  for (let i = 0; i < count; i += ARTIFACTS.length) {
    const now = new Date()
    const episode = crypto.randomUUID()
    for (const [name, type] of ARTIFACTS) await sign(`${ORIGIN}/c1/${episode}/${name}`, type, now)
  }
  return count / ((performance.now() - start) / 1000)
}

export async function main(count = Number(process.env.BENCH_PRESIGN_URLS ?? 30_000), rounds = Number(process.env.BENCH_ROUNDS ?? 5)) {
  console.log(`\nbench/presign: PUT URLs signed one after another, 3 per episode, ${rounds} rounds of ${fmt(count)}, medians`)
  console.log('| SHA-256 | episodic presigner URLs/s | smithy whole presign URLs/s | ratio |')
  console.log('|---|---:|---:|---:|')
  const results: Record<string, number> = {}
  for (const [name, sha256] of [['@aws-crypto/sha256-js', Sha256 as unknown as Sha256Ctor], ['node:crypto (NodeSha256)', NodeSha256]] as const) {
    const a = ours(sha256)
    const b = smithy(sha256)
    await rate(a, 3_000) // warm up both
    await rate(b, 3_000)
    const pairs: [number, number][] = []
    // Interleaved, so both see the same machine; the ratio is per pair.
    for (let round = 0; round < rounds; round++) pairs.push([await rate(a, count), await rate(b, count)])
    const mine = median(pairs.map(([x]) => x))
    const theirs = median(pairs.map(([, y]) => y))
    const ratio = median(pairs.map(([x, y]) => x / y))
    results[name] = ratio
    console.log(`| ${name} | ${fmt(mine)} | ${fmt(theirs)} | ${fmt(ratio, 2)}x |`)
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
