/**
 * Shared pieces of the webhook tests: a receiver that checks every delivery
 * with the reference verifier (`standardwebhooks`, not our code), and an eval
 * run finalized over one ready episode, which queues one delivery per endpoint.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Kysely } from 'kysely'
import { Webhook } from 'standardwebhooks'
import type { Database } from '../../src/db/schema.ts'
import { createEvalRun, finalizeEvalRun } from '../../src/eval/runs.ts'

/** One request the receiver got: whether its signature verified, and its JSON body. */
export interface Received {
  verified: boolean
  body: any
}

/** A receiver on loopback; set `secret` once the endpoint is added. */
export interface VerifyingReceiver {
  url: string
  received: Received[]
  secret: string
  close(): void
}

/** Starts a receiver that answers every delivery with `status`. */
export async function startVerifyingReceiver(status = 204): Promise<VerifyingReceiver> {
  const received: Received[] = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      let verified = false
      try {
        verified = new Webhook(receiver.secret).verify(raw, req.headers as Record<string, string>) !== undefined
      } catch {
        // a signature that does not verify stays unverified
      }
      received.push({ verified, body: JSON.parse(raw) })
      res.writeHead(status).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const receiver: VerifyingReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    secret: '',
    close() {
      server.close()
      server.closeAllConnections()
    },
  }
  return receiver
}

/** Creates a ready episode and an eval run over it, and finalizes the run (queueing its webhooks). */
export async function finalizedRun(
  db: Kysely<Database>,
  clientId: string,
  run: { name: string; candidatePolicyVersion: string; baselinePolicyVersion: string | null },
) {
  const now = new Date()
  const episodeId = crypto.randomUUID()
  await db.insertInto('episodes').values({
    id: episodeId,
    client_id: clientId,
    source: 'real',
    status: 'ready',
    metadata: '{}',
    artifacts: [],
    created_at: now,
    updated_at: now,
  }).execute()
  const runId = crypto.randomUUID()
  await createEvalRun(db, { id: runId, clientId, ...run, baselineEpisodeIds: [episodeId], metadata: {}, minEpisodes: 10, maxOodActionShare: 0.25, now })
  const { summary } = await finalizeEvalRun(db, clientId, runId, now)
  return { runId, summary }
}
