/**
 * Traces (docs/operations.md, "Traces") against a real OTLP/HTTP receiver started here
 * (test/helpers/otlp-receiver.ts decodes what the exporter sends): the HTTP server span with its
 * route template, `invoke_agent`, `chat` and `execute_tool` spans with the GenAI attributes,
 * `traceparent` continued inbound (an unsampled one exports nothing, a malformed one is ignored)
 * and sent outbound (model upstream, HTTP tool), `trace_id` stored on runs and executions, jobs as
 * children of their sender, workflow executions and nodes, no message text unless asked, and an
 * unreachable collector that never fails a request. The model is the real OpenAI provider client
 * against test/helpers/upstream.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.ts'
import { startWeatherServer, type WeatherServer, weatherToolInput } from './helpers/tool-server.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts'
import { flushTracing } from '../src/platform/tracing.ts'
import { get as httpGet } from 'node:http'

/**
 * A GET over node:http: the test process's own `fetch` is instrumented too (tracing is on here),
 * and would add a `traceparent` of its own beside the one a test sends.
 */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    })
    request.on('error', reject)
  })
}

const SERVER = 2
const CLIENT = 3
const CONSUMER = 5
const ERROR = 2

describe('traces exported over OTLP', () => {
  let t: TestApp
  let receiver: OtlpReceiver
  let upstream: Upstream
  let weather: WeatherServer
  let hooks: Receiver
  let alice: TestUser

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    hooks = await startReceiver()
    upstream = await startUpstream()
    weather = await startWeatherServer()
    // The SDK reads the resource's variables from the process's environment itself.
    process.env.OTEL_SERVICE_NAME = 'traced-service'
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=test'
    t = await createTestApp({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '25',
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
    })
    alice = await t.make.user({ name: 'Alice Traces' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
    await weather?.close()
    await hooks?.close()
    await receiver?.close()
  })
  beforeEach(() => {
    upstream.reset()
    weather.requests.length = 0
  })

  /** Every exported span of `traceId`, once the batch holding `last` arrived. */
  async function traceOf(traceId: string, last: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan[]> {
    await flushTracing()
    await receiver.waitFor((span) => span.traceId === traceId && last(span))
    return receiver.spans.filter((span) => span.traceId === traceId)
  }

  const headerOf = (headers: Record<string, string | string[] | undefined>, name: string) => String(headers[name] ?? '')

  it('spans a REST request with its route template and continues an incoming traceparent', async () => {
    const agent = (await t.as(alice).agents.create({ name: 'Plain' } as never)).data
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const parent = '00f067aa0ba902b7'
    const status = await rawGet(`${t.url}/api/v1/agents/${agent.uuid}`, { authorization: `Bearer ${alice.token}`, traceparent: `00-${traceId}-${parent}-01` })
    expect(status).toBe(200)
    const [span] = await traceOf(traceId, (s) => s.kind === SERVER)
    expect(span.name).toBe('GET /api/v1/agents/{agent_uuid}')
    expect(span.parentSpanId).toBe(parent)
    expect(span.attributes).toMatchObject({ 'http.route': '/api/v1/agents/{agent_uuid}', 'http.request.method': 'GET', 'http.response.status_code': 200 })
    // The path holds the uuid; the route never does.
    expect(JSON.stringify(span.attributes['http.route'])).not.toContain(agent.uuid)
    expect(span.resource).toMatchObject({ 'service.name': 'traced-service', 'deployment.environment.name': 'test' })
    expect(span.encoding).toBe('protobuf')

    // tRPC over HTTP: the route is the adapter's, the procedures are named.
    const trpcTrace = 'cccccccccccccccccccccccccccccccc'
    expect(await rawGet(`${t.url}/trpc/user.me,system.ping?batch=1&input={}`, { authorization: `Bearer ${alice.token}`, traceparent: `00-${trpcTrace}-${parent}-01` })).toBe(200)
    const [trpc] = await traceOf(trpcTrace, (s) => s.kind === SERVER)
    expect(trpc.attributes).toMatchObject({ 'http.route': '/trpc/:path', 'rpc.system': 'trpc', 'rpc.method': 'user.me,system.ping' })
  })

  it('ignores a malformed traceparent (a trace of its own) and exports nothing for an unsampled one', async () => {
    const auth = { authorization: `Bearer ${alice.token}` }
    expect(await rawGet(`${t.url}/api/v1/user?malformed`, { ...auth, traceparent: '00-zzzz-not-a-trace-01' })).toBe(200)
    await flushTracing()
    const own = await receiver.waitFor((s) => s.name === 'GET /api/v1/user' && s.kind === SERVER && s.attributes['url.path'] === '/api/v1/user' && s.parentSpanId === '')
    expect(own.parentSpanId).toBe('')
    expect(own.traceId).toMatch(/^[0-9a-f]{32}$/)

    const unsampled = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
    expect(await rawGet(`${t.url}/api/v1/user`, { ...auth, traceparent: `00-${unsampled}-00f067aa0ba902b7-00` })).toBe(200)
    // A sampled request after it: once its span arrived, the unsampled one would have too.
    const marker = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'
    expect(await rawGet(`${t.url}/api/v1/user`, { ...auth, traceparent: `00-${marker}-00f067aa0ba902b7-01` })).toBe(200)
    await traceOf(marker, (s) => s.kind === SERVER)
    expect(receiver.spans.filter((s) => s.traceId === unsampled)).toEqual([])
  })

  it('traces an agent run: invoke_agent, chat and execute_tool with GenAI attributes, traceparent to the upstream and the tool, trace_id on the run', async () => {
    const tool = (await t.as(alice).tools.create(weatherToolInput(weather) as never)).data
    const agent = (await t.as(alice).agents.create({ name: 'Forecaster', tools: [{ tool_uuid: tool.uuid }] } as never)).data
    upstream.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_1' }], usage: { prompt_tokens: 11, completion_tokens: 3 } },
      { kind: 'text', text: 'Sunny in Oslo.', usage: { prompt_tokens: 20, completion_tokens: 4 } },
    )
    const res = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Weather in Oslo? secret-question' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const run = res.body.data.run
    expect(run.trace_id).toMatch(/^[0-9a-f]{32}$/)
    const spans = await traceOf(run.trace_id, (s) => s.name === 'invoke_agent Forecaster')
    const byName = (name: string) => spans.filter((s) => s.name === name)

    const [http] = spans.filter((s) => s.kind === SERVER)
    expect(http.name).toBe('POST /api/v1/agents/{agent_uuid}/run')
    const [agentSpan] = byName('invoke_agent Forecaster')
    expect(agentSpan.parentSpanId).toBe(http.spanId)
    expect(agentSpan.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Forecaster',
      'gen_ai.agent.id': agent.uuid,
      'run.uuid': run.uuid,
      'run.status': 'succeeded',
    })

    const chats = spans.filter((s) => s.name.startsWith('chat '))
    expect(chats).toHaveLength(2)
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(agentSpan.spanId)
      expect(chat.kind).toBe(CLIENT)
      expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai' })
      expect(chat.attributes['gen_ai.request.model']).toBe(chat.name.slice('chat '.length))
      expect(chat.attributes['gen_ai.response.model']).toBeTypeOf('string')
    }
    const [first, second] = [...chats].sort((a, b) => Number(a.attributes['gen_ai.usage.input_tokens']) - Number(b.attributes['gen_ai.usage.input_tokens']))
    expect(first.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 11, 'gen_ai.usage.output_tokens': 3, 'gen_ai.response.finish_reasons': ['tool-calls'] })
    expect(second.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 4, 'gen_ai.response.finish_reasons': ['stop'] })

    const [toolSpan] = byName('execute_tool weather')
    expect(toolSpan.parentSpanId).toBe(agentSpan.spanId)
    expect(toolSpan.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'weather', 'gen_ai.tool.call.id': 'call_1' })

    // Outbound: the upstream saw a traceparent of this trace, from a span under a chat span; the tool, one from its execute_tool span.
    const upstreamParent = headerOf(upstream.requests[0].headers, 'traceparent').split('-')
    expect(upstreamParent[1]).toBe(run.trace_id)
    const client = spans.find((s) => s.spanId === upstreamParent[2])
    expect(client && chats.map((c) => c.spanId)).toContain(client?.parentSpanId)
    expect(weather.traceparents.at(-1)?.split('-')[2]).toBe(toolSpan.spanId)

    // No prompt or answer text unless asked for.
    const exported = JSON.stringify(spans)
    expect(exported).not.toContain('secret-question')
    expect(exported).not.toContain('Sunny in Oslo')
    for (const chat of chats) expect(chat.attributes['gen_ai.input.messages']).toBeUndefined()
  })

  it('puts a prompt run\'s model call under its HTTP span and marks a failed model call', async () => {
    const prompt = (await t.as(alice).prompts.create({ name: 'Greeter', content: 'Say hello to {{name}}', metadata: { input: [{ key: 'name', label: 'Name', type: 'text' }] } } as never)).data
    upstream.enqueue({ kind: 'status', status: 500 })
    const res = await t.http('POST', `/api/v1/prompts/${prompt.uuid}/run`, { token: alice.token, body: { input: { name: 'Ada' } } })
    expect(res.status, JSON.stringify(res.body)).toBe(502)
    await flushTracing()
    const http = await receiver.waitFor((s) => s.name === 'POST /api/v1/prompts/{prompt_uuid}/run' && s.kind === SERVER)
    const chat = await receiver.waitFor((s) => s.traceId === http.traceId && s.name.startsWith('chat '))
    expect(chat.parentSpanId).toBe(http.spanId)
    expect(chat.status.code).toBe(ERROR)
    expect(chat.attributes['error.type']).toBeTypeOf('string')
    expect(receiver.spans.some((s) => s.traceId === http.traceId && s.name.startsWith('invoke_agent'))).toBe(false)
  })

  it('traces a workflow execution and its nodes, and a queued job as a child of the request that sent it', async () => {
    const workflow = (
      await t.as(alice).workflows.create({
        name: 'Traced flow',
        nodes: [
          { id: 'start', type: 'manual_trigger', parameters: {} },
          { id: 'shape', type: 'set', parameters: { values: { greeting: 'hi' } } },
        ],
        edges: [{ id: 'e0', source: 'start', target: 'shape' }],
      } as never)
    ).data
    const res = await t.http('POST', `/api/v1/workflows/${workflow.uuid}/run`, { token: alice.token, body: { input: {} } })
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300)
    const execution = res.body.data
    expect(execution.trace_id).toMatch(/^[0-9a-f]{32}$/)
    const spans = await traceOf(execution.trace_id, (s) => s.name === 'workflow_execution Traced flow')
    const [exec] = spans.filter((s) => s.name === 'workflow_execution Traced flow')
    expect(exec.attributes).toMatchObject({ 'workflow.uuid': workflow.uuid, 'workflow.execution.uuid': execution.uuid, 'workflow.execution.status': 'succeeded' })
    const nodes = spans.filter((s) => s.name.startsWith('workflow_node '))
    expect(nodes.map((s) => s.name).sort()).toEqual(['workflow_node shape', 'workflow_node start'])
    for (const node of nodes) expect(node.parentSpanId).toBe(exec.spanId)
    expect(nodes.find((s) => s.name === 'workflow_node shape')?.attributes).toMatchObject({ 'workflow.node.type': 'set', 'workflow.node.status': 'succeeded' })

    // Queued: the job that runs it is a consumer span under the request that queued it.
    const queued = await t.http('POST', `/api/v1/workflows/${workflow.uuid}/run`, { token: alice.token, body: { input: {}, background: true } })
    expect(queued.status, JSON.stringify(queued.body)).toBeLessThan(300)
    const traceId = queued.body.data.trace_id as string
    // The job's span ends after the execution's: wait for it.
    const jobSpans = await traceOf(traceId, (s) => s.name.startsWith('job '))
    const job = jobSpans.find((s) => s.name.startsWith('job '))
    expect(job?.kind).toBe(CONSUMER)
    const request = jobSpans.find((s) => s.kind === SERVER)
    expect(request).toBeDefined()
    expect(jobSpans.find((s) => s.name === 'workflow_execution Traced flow')?.parentSpanId).toBe(job?.spanId)
  })

  it('traces a webhook delivery under its job, the request carrying the delivery span\'s traceparent; and knowledge embeddings (where retrieval is hybrid)', async () => {
    const created = await t.http('POST', '/api/v1/webhook-endpoints', { token: alice.token, body: { url: hooks.url, event_types: ['*'] } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const ping = await t.http('POST', `/api/v1/webhook-endpoints/${created.body.data.uuid}/ping`, { token: alice.token })
    expect(ping.status).toBe(202)
    const [got] = await hooks.waitFor(1)
    const [, traceId, parentId] = String(got.headers.traceparent).split('-')
    expect(traceId).toMatch(/^[0-9a-f]{32}$/)
    const spans = await traceOf(traceId, (s) => s.name.startsWith('job webhooks.'))
    const delivery = spans.find((s) => s.name === 'webhook_delivery webhook_endpoint.ping')
    expect(delivery?.spanId).toBe(parentId)
    expect(delivery?.attributes).toMatchObject({ 'webhook.event_type': 'webhook_endpoint.ping', 'http.response.status_code': 200 })
    expect(spans.find((s) => s.spanId === delivery?.parentSpanId)?.name).toMatch(/^job webhooks\./)

    const agent = (await t.as(alice).agents.create({ name: 'Reader' } as never)).data
    const trained = await t.http('POST', `/api/v1/agents/${agent.uuid}/train`, {
      token: alice.token,
      body: { sources: [{ type: 'text', name: 'Notes', text: 'The reactor runs at four hundred kelvin.' }] },
    })
    expect(trained.status, JSON.stringify(trained.body)).toBe(202)
    await flushTracing()
    const ingest = await receiver.waitFor((s) => s.name === 'job knowledge.ingest')
    // Embeddings are made where retrieval is hybrid (pgvector: PGlite here, PostgreSQL with the extension).
    if ((await t.http('GET', '/ready')).body.knowledge !== 'hybrid') return
    const embeddings = await receiver.waitFor((s) => s.name.startsWith('embeddings ') && s.traceId === ingest.traceId)
    expect(embeddings.kind).toBe(CLIENT)
    expect(embeddings.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'gen_ai.provider.name': 'openai' })
    expect(embeddings.attributes['gen_ai.usage.input_tokens']).toBeTypeOf('number')
  })
})
