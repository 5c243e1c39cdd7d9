/** @jsxImportSource hono/jsx */
/**
 * The webhooks page (`/portal/webhooks`): each of the client's endpoints with
 * its recent `eval_run.completed` deliveries: status, attempts, the last
 * answer or error, and when the next retry is due. Endpoints are added with
 * `episodic webhooks add` (an admin verb), so the page only reads.
 */
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { type DeliveryView, type EndpointView, listEndpointDeliveries } from '../webhooks/reads.ts'
import { formatTime, NONE } from './format.ts'
import type { PortalEnv } from './guard.ts'
import { Layout, sendPage } from './layout.tsx'
import { useRoot } from './root.ts'

function When(props: { iso: string | null }) {
  return props.iso ? <time datetime={props.iso}>{formatTime(props.iso)}</time> : <>{NONE}</>
}

function DeliveryRow(props: { d: DeliveryView }) {
  const root = useRoot()
  const d = props.d
  const answer = d.last_error ?? (d.last_status === null ? NONE : `HTTP ${d.last_status}`)
  return (
    <tr>
      <td class='head mono'>{d.delivery_id}</td>
      <td data-label='status'>
        <span class={`badge s-${d.status === 'delivered' ? 'done' : d.status}`}>{d.status}</span>
      </td>
      <td data-label='eval run'>{d.eval_run_id ? <a href={`${root}/portal/eval-runs/${d.eval_run_id}`}>{d.eval_run_id.slice(0, 8)}</a> : NONE}</td>
      <td class='num' data-label='attempts'>{String(d.attempts)}</td>
      <td class='full wrap' data-label='last answer'>{answer}</td>
      <td data-label='created'>
        <When iso={d.created_at} />
      </td>
      <td data-label={d.status === 'pending' ? 'next attempt' : 'last attempt'}>
        <When iso={d.status === 'pending' ? d.next_attempt_at : d.last_attempt_at} />
      </td>
    </tr>
  )
}

function Endpoint(props: { e: EndpointView }) {
  const e = props.e
  return (
    <section>
      <h2 class='mono'>{e.webhook_id}</h2>
      <p class='sub'>
        {/* .sub wraps anywhere: a long URL never widens the page. */}
        <span class='mono'>{e.url}</span> · added <When iso={e.created_at} />
      </p>
      {e.deliveries.length === 0 ? <p class='card muted'>No deliveries yet: one is queued when an eval run is finalized.</p> : (
        <div class='scroll'>
          <table class='stack'>
            <thead>
              <tr>
                <th>delivery (webhook-id)</th>
                <th>status</th>
                <th>eval run</th>
                <th class='num'>attempts</th>
                <th>last answer</th>
                <th>created</th>
                <th>next / last attempt</th>
              </tr>
            </thead>
            <tbody>
              {e.deliveries.map((d) => <DeliveryRow key={d.delivery_id} d={d} />)}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

function WebhooksPage(props: { endpoints: EndpointView[] }) {
  return (
    <Layout title='Webhooks' section='webhooks' signedIn>
      <h1>Webhooks</h1>
      <p class='sub'>Each endpoint's most recent eval_run.completed deliveries. Failed attempts are retried with backoff for 24 hours.</p>
      {props.endpoints.length === 0
        ? (
          <p class='card muted'>
            No webhook endpoints. An operator adds one with <code>episodic webhooks add --client NAME URL</code>.
          </p>
        )
        : (
          props.endpoints.map((e) => <Endpoint key={e.webhook_id} e={e} />)
        )}
    </Layout>
  )
}

/** Mounted at `/portal/webhooks` behind the session guard. */
export function webhookPages(deps: Deps) {
  const app = new Hono<PortalEnv>()
  app.get('/', async (c) => sendPage(c, 200, <WebhooksPage endpoints={await listEndpointDeliveries(deps.db, c.get('clientId'))} />))
  return app
}
