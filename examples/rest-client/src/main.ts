/**
 * A typed REST client of the service: signs up and in, creates an agent on the built-in test
 * model, runs it, reads the run's events from its Server-Sent Events stream and reads a metric.
 * The types are generated from the service's `GET /openapi.json` (`npm run generate`); any failure
 * exits non-zero.
 *
 *   BASE=http://127.0.0.1:3000 node src/main.ts
 */
import createClient, { type Middleware } from 'openapi-fetch'
import type { paths } from './openapi.d.ts'

const base = process.env.BASE ?? 'http://127.0.0.1:3000'
let token: string | undefined

// The run operations declare a text/event-stream answer beside the JSON one (one-request
// streaming); typing the client for application/json keeps `data` the JSON body's type.
const api = createClient<paths, 'application/json'>({ baseUrl: base })
/** Every request after sign-in carries the bearer token. */
const bearer: Middleware = {
  onRequest({ request }) {
    if (token) request.headers.set('Authorization', `Bearer ${token}`)
    return request
  },
}
api.use(bearer)

/** The answer's data, or a thrown error with the service's error body (`{code, message, request_id}`). */
function ok<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`)
  return result.data
}

type RunEvent = { id: string; event: string; data: string }

/**
 * The run's events from `GET /api/v1/runs/{run_uuid}/events` (Server-Sent Events) until the
 * stream ends after the final one. Read with fetch, which can send the bearer token (a browser's
 * EventSource cannot).
 */
async function followRun(runUuid: string): Promise<RunEvent[]> {
  const response = await fetch(`${base}/api/v1/runs/${runUuid}/events`, {
    headers: { Authorization: `Bearer ${token ?? ''}`, Accept: 'text/event-stream' },
  })
  if (!response.ok || !response.body) throw new Error(`run events: ${response.status} ${await response.text()}`)
  const events: RunEvent[] = []
  let buffer = ''
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    buffer += chunk.value
    let end: number
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const fields = new Map<string, string>()
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':')
        // A line starting with ':' is a keep-alive comment.
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart())
      }
      const event = fields.get('event')
      if (event) events.push({ id: fields.get('id') ?? '', event, data: fields.get('data') ?? '' })
    }
  }
  return events
}

async function main(): Promise<void> {
  const email = `ada-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`
  const password = 'correct horse battery'
  ok(await api.POST('/api/v1/auth/sign-up', { body: { name: 'Ada Lovelace', email, password } }), 'sign-up')
  const session = ok(await api.POST('/api/v1/auth/sign-in', { body: { email, password } }), 'sign-in')
  token = session.data.access_token
  console.log(`signed up and in as ${email}`)

  const created = ok(
    await api.POST('/api/v1/agents', {
      body: { name: 'Echo', instruction: 'Answer briefly.', metadata: { large_language_model: 'local-test-model' } },
    }),
    'create agent',
  )
  const agent = created.data
  console.log(`created agent ${agent.uuid} (${agent.name})`)

  const ran = ok(await api.POST('/api/v1/agents/{agent_uuid}/run', { params: { path: { agent_uuid: agent.uuid } }, body: { input: 'Hello!' } }), 'run')
  const run = ran.data.run
  console.log(`run ${run.uuid}: ${run.status}, output: ${run.output ?? ''}`)

  const events = await followRun(run.uuid)
  console.log(`events: ${events.map((event) => `${event.id} ${event.event}`).join(', ')}`)
  if (events.at(-1)?.event !== 'run.succeeded') throw new Error('the run did not end with run.succeeded')

  const list = ok(await api.GET('/api/v1/agents', { params: { query: { per_page: 5 } } }), 'list agents')
  console.log(`agents: ${list.data.map((one) => `${one.name} (runs: ${one.usage_count})`).join(', ')}`)

  // The specification's path; `/api/v1/agents/metrics` is the same operation.
  const metric = ok(await api.POST('/v1/agents/metrics', { body: { calculation: 'accumulated_count' } }), 'agents metric')
  console.log(`POST /v1/agents/metrics accumulated_count: ${metric.total ?? 'null'}`)
  if (metric.total !== 1) throw new Error(`expected 1 agent, the metric says ${metric.total ?? 'null'}`)
}

main().then(
  () => console.log('rest-client example: ok'),
  (error: unknown) => {
    console.error('rest-client example failed:', error)
    process.exit(1)
  },
)
