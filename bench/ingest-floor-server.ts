/**
 * The floor for bench/ingest: a bare Hono app on @hono/node-server doing the
 * same INSERT and UPDATE with raw postgres.js, with no authentication,
 * validation or URL signing. What any HTTP service pays on this machine.
 */
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import postgres from 'postgres'

const sql = postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {} })
const clientId = process.env.BENCH_CLIENT_ID!
const app = new Hono()
app.post('/open', async (c) => {
  const body = await c.req.json<{ name: string; robot: string; policy_version: string; metadata: unknown }>()
  const id = crypto.randomUUID()
  const now = new Date()
  await sql`insert into episodes (id, client_id, name, source, robot, policy_version, metadata, status, artifacts, created_at, updated_at)
    values (${id}, ${clientId}, ${body.name}, 'real', ${body.robot}, ${body.policy_version}, ${JSON.stringify(body.metadata)}::jsonb, 'recording', ${[
    'video',
    'sensors',
    'actions',
  ]}, ${now}, ${now})`
  return c.json({ episode_id: id }, 201)
})
app.post('/finalize/:id', async (c) => {
  const body = await c.req.json<{ duration_s: number; bytes_total: number; metadata: unknown }>()
  const now = new Date()
  await sql`update episodes set status = 'ready', duration_s = ${body.duration_s}, bytes_total = ${body.bytes_total},
    metadata = coalesce(metadata, '{}'::jsonb) || ${JSON.stringify(body.metadata)}::jsonb, updated_at = ${now}
    where id = ${c.req.param('id')} and client_id = ${clientId} and status <> 'archived'`
  return c.json({ ok: true })
})
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => console.log(`listening on http://127.0.0.1:${info.port}`))
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0))
