// A webhook receiver for episodic's eval_run.completed, verifying every
// request with the Standard Webhooks reference library (npm i standardwebhooks).
//
// First, on the episodic side (it prints the signing secret, whsec_..., once):
//   episodic webhooks add --client default http://127.0.0.1:3000/episodic
//
// Then, with that secret:
//   EPISODIC_WEBHOOK_SECRET=whsec_... PORT=3000 node receiver.mjs
import { createServer } from 'node:http'
import { Webhook } from 'standardwebhooks'

const webhook = new Webhook(process.env.EPISODIC_WEBHOOK_SECRET) // the whsec_... printed by `webhooks add`
// Deliveries are at least once: a retry repeats the same webhook-id (= event.id).
// Keep this in a database in production; a Set is enough for the example.
const handled = new Set()

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    // Verify the raw bytes, before any JSON parsing or re-serialising.
    const body = Buffer.concat(chunks).toString('utf8')
    let event
    try {
      event = webhook.verify(body, req.headers) // checks signature and timestamp (5 min tolerance)
    } catch {
      res.writeHead(400).end('invalid signature')
      return
    }
    if (!handled.has(event.id)) {
      handled.add(event.id)
      const { eval_run_id, name, candidate_policy_version, summary } = event.data
      console.log(`${event.type}: ${name} (${candidate_policy_version}) -> ${summary.recommend} [${eval_run_id}]`)
    }
    // Answer 2xx quickly; anything else (or no answer in 15 s) is retried.
    res.writeHead(204).end()
  })
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
