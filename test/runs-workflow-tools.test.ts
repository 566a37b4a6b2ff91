/**
 * What a run offers its model besides the agent's HTTP tools (docs/api/runs.md, "Linked
 * workflows" and "Web search"): each linked workflow the caller may run, whose call is an
 * ordinary manual execution linked from the run's events, and the provider's web search when
 * `metadata.web_search` asks for it, or a warning when the provider has none. The models are the
 * real OpenAI and OpenAI-compatible provider clients against test/helpers/upstream.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

/** A graph of a trigger (its type, or the node) followed by `rest`, one after the other. */
function chain(trigger: string | Record<string, unknown>, ...rest: Record<string, unknown>[]) {
  const first = typeof trigger === 'string' ? { type: trigger } : trigger
  const nodes = [{ id: 'start', parameters: {}, ...first }, ...rest.map((node, index) => ({ id: `n${index}`, parameters: {}, ...node }))]
  const edges = nodes.slice(1).map((node, index) => ({ id: `e${index}`, source: nodes[index].id, target: node.id }))
  return { nodes, edges }
}

/** LLM_TIMEOUT_MS of this file: long enough for every quick run, short enough to outlast. */
const RUN_TIMEOUT_MS = 3_000

describe('runs with linked workflows and web search', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  let bob: TestUser

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      OPENAI_COMPATIBLE_BASE_URL: upstream.url,
      LLM_TIMEOUT_MS: String(RUN_TIMEOUT_MS),
    })
    alice = await t.make.user({ name: 'Alice Flows' })
    bob = await t.make.user({ name: 'Bob Flows' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  const workflow = async (user: TestUser, body: Record<string, unknown>) => {
    const res = await t.http('POST', '/api/v1/workflows', { token: user.token, body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string; name: string }
  }
  const agent = async (user: TestUser, body: Record<string, unknown>) => {
    const res = await t.http('POST', '/api/v1/agents', { token: user.token, body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string }
  }
  const run = (user: TestUser, agentUuid: string, body: Record<string, unknown>) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: user.token, body })
  const executionsOf = async (user: TestUser, workflowUuid: string) =>
    (await t.http('GET', `/api/v1/workflow-executions?workflow_uuid=${workflowUuid}`, { token: user.token })).body.data as {
      uuid: string
      status: string
      mode: string
      input: unknown
      output: unknown
      error: { code: string } | null
      user: { id: number } | null
    }[]
  const eventsOf = async (user: TestUser, runUuid: string) =>
    (await readSse(`${t.url}/api/v1/runs/${runUuid}/events`, { authorization: `Bearer ${user.token}` })).events.map((event) => ({
      type: event.event,
      data: JSON.parse(event.data).data,
    }))
  const offered = (index = 0) =>
    (upstream.requests[index].body.tools ?? []) as { function: { name: string; description: string; parameters: unknown } }[]
  /** Polls the executions of a workflow until one has a status in `statuses` (5 s at most). */
  async function untilEnded(user: TestUser, workflowUuid: string, statuses: string[]) {
    for (let i = 0; i < 100; i++) {
      const [execution] = await executionsOf(user, workflowUuid)
      if (execution && statuses.includes(execution.status)) return execution
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`no execution of ${workflowUuid} reached ${statuses.join('/')}`)
  }

  describe('linked workflows', () => {
    it('offers a linked workflow (inactive too) as a tool; a call is a manual execution of the caller whose output goes back to the model', async () => {
      const flow = await workflow(alice, {
        name: 'Order status',
        description: 'Looks up the status of an order by its id',
        ...chain('manual_trigger', {
          type: 'set',
          parameters: { values: { status: 'shipped', order: '=$input.order_id' }, mode: 'replace' },
        }),
      })
      const bot = await agent(alice, { name: 'Support', workflows: [{ workflow_uuid: flow.uuid }] })
      upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'order_status', arguments: '{"order_id":"A-17"}', id: 'call_w1' }] },
        { kind: 'text', text: 'Your order A-17 has shipped.' },
      )
      const res = await run(alice, bot.uuid, { input: 'Where is my order A-17?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)

      expect(offered().map((tool) => tool.function)).toEqual([
        {
          name: 'order_status',
          description: 'Looks up the status of an order by its id',
          parameters: expect.objectContaining({ type: 'object' }),
        },
      ])
      const [execution] = await executionsOf(alice, flow.uuid)
      expect(execution).toMatchObject({
        status: 'succeeded',
        mode: 'manual',
        input: { order_id: 'A-17' },
        output: { status: 'shipped', order: 'A-17' },
      })
      expect(execution.user?.id).toBe(alice.id)

      // The model's second call carried the execution's output as the tool result.
      const second = upstream.requests[1].body.messages as { role: string; content: string; tool_call_id?: string }[]
      const result = second.find((message) => message.role === 'tool')
      expect(result?.tool_call_id).toBe('call_w1')
      expect(JSON.parse(result?.content ?? 'null')).toEqual({ status: 'shipped', order: 'A-17' })

      const { run: stored, messages } = res.body.data
      expect(stored).toMatchObject({ status: 'succeeded', output: 'Your order A-17 has shipped.', warnings: [] })
      expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
      expect(messages[1].parts).toEqual([
        { type: 'tool-call', tool_call_id: 'call_w1', tool_name: 'order_status', input: { order_id: 'A-17' } },
      ])
      expect(messages[2].parts).toEqual([
        {
          type: 'tool-result',
          tool_call_id: 'call_w1',
          tool_name: 'order_status',
          output: { status: 'shipped', order: 'A-17' },
          is_error: false,
        },
      ])

      const events = await eventsOf(alice, stored.uuid)
      expect(events.find((event) => event.type === 'tool.call')?.data).toEqual({
        type: 'tool-call',
        tool_call_id: 'call_w1',
        tool_name: 'order_status',
        input: { order_id: 'A-17' },
      })
      expect(events.find((event) => event.type === 'tool.result')?.data).toMatchObject({
        tool_call_id: 'call_w1',
        is_error: false,
        workflow_uuid: flow.uuid,
        execution_uuid: execution.uuid,
      })
    })

    it('gives a webhook-triggered workflow the arguments as its webhook body, and names tools uniquely next to the HTTP tools', async () => {
      const hooked = await workflow(alice, {
        name: 'Lookup',
        ...chain('webhook_trigger', {
          type: 'set',
          parameters: { values: { got: '=$input.body.q', method: '=$input.method' }, mode: 'replace' },
        }),
      })
      const scheduled = await workflow(alice, {
        name: 'Nightly report',
        ...chain({ type: 'schedule_trigger', parameters: { cron: '0 3 * * *' } }),
      })
      const tool = (
        await t
          .as(alice)
          .tools.create({ name: 'Lookup', method: 'GET', url: 'http://127.0.0.1:9/lookup', input_schema: { type: 'object' } } as never)
      ).data
      const bot = await agent(alice, {
        name: 'Looker',
        tools: [{ tool_uuid: tool.uuid }],
        workflows: [{ workflow_uuid: hooked.uuid }, { workflow_uuid: scheduled.uuid }],
      })
      upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'lookup_2', arguments: '{"q":"kiwi"}', id: 'call_h' }] },
        { kind: 'text', text: 'Done.' },
      )
      const res = await run(alice, bot.uuid, { input: 'Look up kiwi' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const tools = offered().map((item) => item.function)
      expect(tools.map((item) => item.name)).toEqual(['lookup', 'lookup_2', 'nightly_report'])
      expect(tools[1].description).toBe(
        'Runs the workflow "Lookup".\n\nThe arguments are the JSON body of the webhook request that starts it.',
      )
      expect(tools[2].parameters).toMatchObject({ type: 'object', properties: {}, additionalProperties: false })
      const [execution] = await executionsOf(alice, hooked.uuid)
      expect(execution).toMatchObject({
        status: 'succeeded',
        input: { method: 'POST', headers: {}, query: {}, body: { q: 'kiwi' } },
        output: { got: 'kiwi', method: 'POST' },
      })
    })

    it('tells the model that a linked workflow failed, naming the execution; the run goes on and succeeds', async () => {
      const flow = await workflow(alice, {
        name: 'Broken flow',
        ...chain('manual_trigger', { type: 'set', parameters: { values: { x: "=$error('the ledger is closed')" } } }),
      })
      const bot = await agent(alice, { name: 'Unlucky', workflows: [{ workflow_uuid: flow.uuid }] })
      upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'broken_flow', arguments: '{}', id: 'call_f' }] },
        { kind: 'text', text: 'It failed, sorry.' },
      )
      const res = await run(alice, bot.uuid, { input: 'Try it' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'It failed, sorry.' })
      const [execution] = await executionsOf(alice, flow.uuid)
      expect(execution.status).toBe('failed')

      const toolMessage = res.body.data.messages.find((m: { role: string }) => m.role === 'tool')
      expect(toolMessage.parts[0]).toMatchObject({ tool_call_id: 'call_f', is_error: true })
      expect(toolMessage.parts[0].output.error).toContain(`Workflow execution ${execution.uuid} ended failed`)
      expect(toolMessage.parts[0].output.error).toContain('the ledger is closed')
      const second = upstream.requests[1].body.messages as { role: string; content: string }[]
      expect(second.find((message) => message.role === 'tool')?.content).toContain('the ledger is closed')
      const events = await eventsOf(alice, res.body.data.run.uuid)
      expect(events.find((event) => event.type === 'tool.result')?.data).toMatchObject({ is_error: true, execution_uuid: execution.uuid })
    })

    it("cancels a workflow slower than the run's time: the execution ends canceled and the run fails 504", async () => {
      const flow = await workflow(alice, { name: 'Slow flow', ...chain('manual_trigger', { type: 'wait', parameters: { seconds: 30 } }) })
      const bot = await agent(alice, { name: 'Patient', workflows: [{ workflow_uuid: flow.uuid }] })
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'slow_flow', arguments: '{}', id: 'call_s' }] })
      const began = Date.now()
      const res = await run(alice, bot.uuid, { input: 'Take your time' })
      expect(res.status, JSON.stringify(res.body)).toBe(504)
      expect(Date.now() - began).toBeLessThan(RUN_TIMEOUT_MS + 3_000)
      const execution = await untilEnded(alice, flow.uuid, ['canceled', 'failed', 'succeeded'])
      expect(execution).toMatchObject({ status: 'canceled', error: { code: 'canceled' } })
      expect(upstream.requests).toHaveLength(1)
    })

    it('cancels the execution under way when the run is canceled', async () => {
      const flow = await workflow(alice, {
        name: 'Slow to cancel',
        ...chain('manual_trigger', { type: 'wait', parameters: { seconds: 30 } }),
      })
      const bot = await agent(alice, { name: 'Cancelable', workflows: [{ workflow_uuid: flow.uuid }] })
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'slow_to_cancel', arguments: '{}', id: 'call_c' }] })
      const res = await run(alice, bot.uuid, { input: 'Go', background: true })
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      await untilEnded(alice, flow.uuid, ['running'])
      const canceled = await t.http('POST', `/api/v1/runs/${res.body.data.run.uuid}/cancel`, { token: alice.token })
      expect(canceled.status, JSON.stringify(canceled.body)).toBe(200)
      expect(await untilEnded(alice, flow.uuid, ['canceled', 'failed', 'succeeded'])).toMatchObject({ status: 'canceled' })
    })

    it('offers only the linked workflows the caller may run: not a private one of the owner, not an empty or deleted one', async () => {
      const mine = await workflow(alice, { name: 'Private flow', ...chain('manual_trigger') })
      const open = await workflow(alice, { name: 'Public flow', visibility: 'public', ...chain('manual_trigger') })
      const empty = await workflow(alice, { name: 'Empty flow', visibility: 'public' })
      const gone = await workflow(alice, { name: 'Gone flow', visibility: 'public', ...chain('manual_trigger') })
      const bot = await agent(alice, {
        name: 'Shared helper',
        workflows: [mine, open, empty, gone].map((flow) => ({ workflow_uuid: flow.uuid })),
      })
      expect((await t.http('DELETE', `/api/v1/workflows/${gone.uuid}`, { token: alice.token })).status).toBe(204)
      const shared = await t.http('POST', `/api/v1/agents/${bot.uuid}/share`, {
        token: alice.token,
        body: { entity_type: 'user', entity_id: bob.id, permission: 'read' },
      })
      expect(shared.status, JSON.stringify(shared.body)).toBe(200)

      const asAlice = await run(alice, bot.uuid, { input: 'hello' })
      expect(asAlice.status, JSON.stringify(asAlice.body)).toBe(200)
      expect(offered(0).map((tool) => tool.function.name)).toEqual(['private_flow', 'public_flow'])

      upstream.reset()
      upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'private_flow', arguments: '{}', id: 'call_p' }] },
        { kind: 'text', text: 'No.' },
      )
      const asBob = await run(bob, bot.uuid, { input: 'hello' })
      expect(asBob.status, JSON.stringify(asBob.body)).toBe(200)
      expect(offered(0).map((tool) => tool.function.name)).toEqual(['public_flow'])
      // Named anyway, it is an unknown tool: no execution of Alice's private workflow is made.
      expect(asBob.body.data.messages.find((m: { role: string }) => m.role === 'tool').parts[0]).toMatchObject({ is_error: true })
      expect(await executionsOf(alice, mine.uuid)).toEqual([])
    })
  })

  it('bounds a workflow that runs the agent that calls it: three nested executions, then the innermost run is offered none', async () => {
    const bot = await agent(alice, { name: 'Recursive' })
    const flow = await workflow(alice, {
      name: 'Ask again',
      ...chain('manual_trigger', { type: 'run_agent', parameters: { agent_uuid: bot.uuid, message: 'Once more' } }),
    })
    expect(
      (await t.http('PUT', `/api/v1/agents/${bot.uuid}`, { token: alice.token, body: { workflows: [{ workflow_uuid: flow.uuid }] } }))
        .status,
    ).toBe(200)
    // Every model call that is offered the tool calls it; once it has the result, it answers.
    upstream.respondWith((request) => {
      const messages = request.body.messages as { role: string }[]
      if (!request.body.tools || messages.some((message) => message.role === 'tool')) return { kind: 'text', text: 'Done.' }
      return { kind: 'tool_calls', calls: [{ name: 'ask_again', arguments: '{}' }] }
    })
    const res = await run(alice, bot.uuid, { input: 'Start' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const executions = await executionsOf(alice, flow.uuid)
    expect(executions.map((execution) => execution.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
    const offeredTo = upstream.requests.filter(
      (request) => !(request.body.messages as { role: string }[]).some((message) => message.role === 'tool'),
    )
    expect(offeredTo.map((request) => (request.body.tools ?? []).length)).toEqual([1, 1, 1, 0])
  })

  describe('web search', () => {
    it('warns, in an event and on the answer, when the provider has no web search (an OpenAI-compatible server); the run goes on without it', async () => {
      const bot = await agent(alice, {
        name: 'Searcher',
        metadata: { web_search: true, large_language_model: 'openai-compatible-default' },
      })
      const res = await run(alice, bot.uuid, { input: 'What happened today?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const warning = { code: 'web_search_unavailable', message: expect.stringContaining('has no web search') }
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'Echo: What happened today?', warnings: [warning] })
      expect(upstream.requests).toHaveLength(1)
      expect(upstream.requests[0].path).toBe('/v1/chat/completions')
      expect(upstream.requests[0].body.tools).toBeUndefined()

      const read = await t.http('GET', `/api/v1/runs/${res.body.data.run.uuid}`, { token: alice.token })
      expect(read.body.data.run.warnings).toEqual([warning])
      const events = await eventsOf(alice, res.body.data.run.uuid)
      expect(events.slice(0, 2)).toEqual([
        { type: 'run.started', data: expect.anything() },
        { type: 'run.warning', data: warning },
      ])

      const background = await run(alice, bot.uuid, { input: 'Again', background: true })
      expect(background.status).toBe(202)
      expect(background.body.data.run.warnings).toEqual([warning])
      // Its events end with the run, so it calls the upstream no more after this test.
      expect((await eventsOf(alice, background.body.data.run.uuid)).map((event) => event.type)).toContain('run.warning')
    })

    it("offers OpenAI's web search through the Responses API; the provider's search is logged, not stored in the thread", async () => {
      const flow = await workflow(alice, { name: 'Web search', ...chain('manual_trigger') })
      const bot = await agent(alice, { name: 'Researcher', metadata: { web_search: true }, workflows: [{ workflow_uuid: flow.uuid }] })
      upstream.enqueue({ kind: 'web_search', query: 'service news today', text: 'Here is the news.' })
      const res = await run(alice, bot.uuid, { input: 'What is new today?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'Here is the news.', warnings: [] })

      expect(upstream.requests.map((request) => request.path)).toEqual(['/v1/responses'])
      const tools = upstream.requests[0].body.tools as { type: string; name?: string }[]
      // The provider's tool keeps its name; the workflow named alike gives way.
      expect(tools).toEqual([
        expect.objectContaining({ type: 'function', name: 'web_search_2' }),
        expect.objectContaining({ type: 'web_search' }),
      ])

      expect(res.body.data.messages.map((m: { role: string; parts: unknown[] }) => [m.role, m.parts.length])).toEqual([
        ['user', 1],
        ['assistant', 1],
      ])
      const events = await eventsOf(alice, res.body.data.run.uuid)
      expect(events.find((event) => event.type === 'tool.call')?.data).toMatchObject({ tool_name: 'web_search', provider_executed: true })
      expect(events.find((event) => event.type === 'tool.result')?.data).toMatchObject({
        tool_name: 'web_search',
        provider_executed: true,
        is_error: false,
      })

      // The next run of the thread sends the earlier answer without the search in it.
      upstream.reset()
      const next = await t.http('POST', `/api/v1/agents/${bot.uuid}/run`, {
        token: alice.token,
        body: { input: 'And tomorrow?', thread_uuid: res.body.data.run.thread_uuid },
      })
      expect(next.status, JSON.stringify(next.body)).toBe(200)
      expect(next.body.data.run.output).toBe('Echo: And tomorrow?')
      const input = upstream.requests[0].body.input as { type?: string; role?: string }[]
      expect(input.filter((item) => item.type === 'web_search_call' || item.type === 'function_call')).toEqual([])
    })

    it('warns when the model cannot call tools at all', async () => {
      const bot = await agent(alice, { name: 'Offline searcher', metadata: { web_search: true, large_language_model: 'openai-compatible-default' } })
      await t.sql(`update large_language_models set supports_tools = false where slug = 'openai-compatible-default'`)
      try {
        const res = await run(alice, bot.uuid, { input: 'Search something' })
        expect(res.body.data.run.warnings).toEqual([
          { code: 'web_search_unavailable', message: expect.stringContaining('cannot call tools') },
        ])
      } finally {
        await t.sql(`update large_language_models set supports_tools = true where slug = 'openai-compatible-default'`)
      }
    })

    it('has no warning without web_search', async () => {
      const bot = await agent(alice, { name: 'Plain', metadata: { large_language_model: 'openai-compatible-default' } })
      const res = await run(alice, bot.uuid, { input: 'Hi' })
      expect(res.body.data.run.warnings).toEqual([])
    })
  })
})
