/**
 * What a run does beyond one answer: an agent's `api` tools called
 * over HTTP and stored in the events and the thread, memory extracted after a run and given to
 * later ones, thread names, and a run followed or cancelled from another API process.
 * The model is the real OpenAI provider client against test/helpers/upstream.ts.
 */
import { startWeatherServer, type WeatherServer, weatherToolInput } from './helpers/tool-server.ts'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid } from './helpers/expect.ts'
import { startNode, type Node } from './helpers/nodes.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { idempotencyKeyOf, LOST_CALL } from '../src/runs/model-stream.ts'

const withRedis = Boolean(process.env.REDIS_URL)

describe('runs with tools, memory and names', () => {
  let t: TestApp
  let upstream: Upstream
  let weather: WeatherServer
  let alice: TestUser
  let bob: TestUser

  beforeAll(async () => {
    upstream = await startUpstream()
    weather = await startWeatherServer()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, TOOL_ALLOW_PRIVATE_NETWORK: 'true' })
    alice = await t.make.user({ name: 'Alice Tools' })
    bob = await t.make.user({ name: 'Bob Tools' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
    await weather?.close()
  })
  beforeEach(() => {
    upstream.reset()
    weather.requests.length = 0
    weather.idempotencyKeys.length = 0
  })

  const run = (user: { token: string }, agentUuid: string, body: Record<string, unknown>) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: user.token, body })

  const weatherAgent = async () => {
    const tool = (await t.as(alice).tools.create(weatherToolInput(weather) as never)).data
    return (await t.as(alice).agents.create({ name: 'Forecaster', tools: [{ tool_uuid: tool.uuid }] } as never)).data
  }

  it('offers the api tools, calls one over HTTP, and stores the call and result in the events and the thread', async () => {
    const agent = await weatherAgent()
    upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_1' }] }, { kind: 'text', text: 'Sunny in Oslo.' })
    const res = await run(alice, agent.uuid, { input: 'Weather in Oslo?' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(weather.requests).toEqual(['/weather?city=Oslo'])
    const offered = upstream.requests[0].body.tools as { function: { name: string } }[]
    expect(offered.map((tool) => tool.function.name)).toEqual(['weather'])
    const { messages, run: stored } = res.body.data
    expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
    expect(messages[1].parts).toEqual([{ type: 'tool-call', tool_call_id: 'call_1', tool_name: 'weather', input: { city: 'Oslo' } }])
    expect(messages[2].parts).toEqual([
      { type: 'tool-result', tool_call_id: 'call_1', tool_name: 'weather', output: { city: 'Oslo', forecast: 'sunny' }, is_error: false },
    ])
    expect(stored.output).toBe('Sunny in Oslo.')
    // The second model call carried the tool result.
    const second = upstream.requests[1].body.messages as { role: string; content: string }[]
    expect(second.find((m) => m.role === 'tool')?.content).toContain('sunny')
    const events = await readSse(`${t.url}/api/v1/runs/${stored.uuid}/events`, { authorization: `Bearer ${alice.token}` })
    const types = events.events.map((e) => e.event)
    expect(types.indexOf('tool.call')).toBeGreaterThan(0)
    expect(types.indexOf('tool.result')).toBeGreaterThan(types.indexOf('tool.call'))
  })

  it('takes over a run whose process died after logging two calls: the idempotent tool is called again with the same Idempotency-Key, the other answered as lost', async () => {
    const tool = (body: Record<string, unknown>) => t.as(alice).tools.create({ method: 'GET', url: `${weather.url}/weather?city={{city}}`, input_schema: { type: 'object', properties: { city: { type: 'string' } } }, ...body } as never)
    const lookup = (await tool({ name: 'lookup', idempotent: true })).data
    const record = (await tool({ name: 'record' })).data
    const agent = (await t.as(alice).agents.create({ name: 'Careful', tools: [{ tool_uuid: lookup.uuid }, { tool_uuid: record.uuid }] } as never)).data
    const thread = (await t.as(alice).threads.create({ agent_uuid: agent.uuid } as never)).data
    // What a process that died while both calls ran left: its user message, the step's text and the calls, no result.
    const [row] = await t.sql(
      `insert into runs (uuid, kind, status, agent_id, thread_id, user_id, workspace_id, input, events_count, started_at, heartbeat_at, created_at, updated_at)
       select gen_random_uuid(), 'thread', 'running', a.id, th.id, a.user_id, a.workspace_id, '"Check Oslo and note Bergen"', 4, now(), now() - interval '1 hour', now(), now()
       from agents a join threads th on th.uuid = ? where a.uuid = ? returning id::float8 as id, uuid`,
      [thread.uuid, agent.uuid],
    )
    await t.sql(
      `insert into messages (uuid, thread_id, run_id, user_id, workspace_id, role, content, parts, created_at, updated_at)
       select gen_random_uuid(), r.thread_id, r.id, r.user_id, r.workspace_id, 'user', 'Check Oslo and note Bergen', '[{"type":"text","text":"Check Oslo and note Bergen"}]', now(), now() from runs r where r.id = ?`,
      [row.id],
    )
    const call = (id: string, name: string, city: string) => JSON.stringify({ type: 'tool-call', tool_call_id: id, tool_name: name, input: { city } })
    await t.sql(
      `insert into run_events (run_id, seq, type, data, created_at) values
         (?, 1, 'run.started', '{}', now()), (?, 2, 'text.delta', '{"text":"On it."}', now()), (?, 3, 'tool.call', ?::jsonb, now()), (?, 4, 'tool.call', ?::jsonb, now())`,
      [row.id, row.id, row.id, call('call_a', 'lookup', 'Oslo'), row.id, call('call_b', 'record', 'Bergen')],
    )
    upstream.enqueue({ kind: 'text', text: 'Oslo is sunny.' })
    const follow = readSse(`${t.url}/api/v1/runs/${row.uuid}/events`, { authorization: `Bearer ${alice.token}` })
    await t.runtime.runs.sweep()
    const events = (await follow).events
    expect(events.at(-1)?.event).toBe('run.succeeded')
    expect(JSON.parse(events[4].data)).toMatchObject({ type: 'run.resumed', data: { reason: 'interrupted', discarded_after: 4 } })
    // Only the idempotent call went out again, with the key derived from the run and the call.
    expect(weather.requests).toEqual(['/weather?city=Oslo'])
    expect(weather.idempotencyKeys).toEqual([idempotencyKeyOf(String(row.uuid), 'call_a')])
    const results = upstream.requests[0].body.messages.filter((m: { role: string }) => m.role === 'tool')
    expect(results.map((m: { tool_call_id: string }) => m.tool_call_id)).toEqual(['call_a', 'call_b'])
    expect(results[0].content).toContain('sunny')
    expect(results[1].content).toContain(LOST_CALL)
    const read = await t.http('GET', `/api/v1/runs/${row.uuid}`, { token: alice.token })
    expect(read.body.data.run).toMatchObject({ status: 'succeeded', output: 'On it.Oslo is sunny.' })
    const messages = read.body.data.messages as { role: string; parts: { type: string; tool_call_id?: string; is_error?: boolean }[] }[]
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
    expect(messages[1].parts.map((p) => p.tool_call_id ?? p.type)).toEqual(['text', 'call_a', 'call_b'])
    expect(messages[2].parts.map((p) => [p.tool_call_id, p.is_error])).toEqual([
      ['call_a', false],
      ['call_b', true],
    ])
  })

  it('logs a tool call before the tool runs: a run whose tool is slow has the call stored while it waits', async () => {
    const agent = await weatherAgent()
    upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_logged_first' }] }, { kind: 'text', text: 'Sunny.' })
    const seen: unknown[] = []
    weather.onRequest = async () => {
      const [stored] = await t.sql(`select count(*)::int as n from run_events where type = 'tool.call' and data->>'tool_call_id' = 'call_logged_first'`)
      seen.push(stored.n)
    }
    try {
      const res = await run(alice, agent.uuid, { input: 'Weather in Oslo?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
    } finally {
      weather.onRequest = undefined
    }
    expect(seen).toEqual([1])
  })

  it('offers no tools on a model without tool support: one model call without tools, answered and stored as usual', async () => {
    const agent = await weatherAgent()
    await t.sql(`update large_language_models set supports_tools = false where slug = 'gpt-4o-mini'`)
    try {
      const res = await run(alice, agent.uuid, { input: 'Weather in Oslo?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'Echo: Weather in Oslo?', model: 'gpt-4o-mini' })
      expect(res.body.data.usage.total_tokens).toBeGreaterThan(0)
      expect(res.body.data.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
      expect(upstream.requests).toHaveLength(1)
      expect(upstream.requests[0].body.tools).toBeUndefined()
      expect(upstream.requests[0].body.messages[0]).toMatchObject({ role: 'system' })
      expect(weather.requests).toHaveLength(0)
    } finally {
      await t.sql(`update large_language_models set supports_tools = true where slug = 'gpt-4o-mini'`)
    }
  })

  it('answers an unknown tool and invalid arguments with error results; the run goes on', async () => {
    const agent = await weatherAgent()
    upstream.enqueue(
      {
        kind: 'tool_calls',
        calls: [
          { name: 'no_such_tool', arguments: '{}', id: 'call_a' },
          { name: 'weather', arguments: '{"city": 42}', id: 'call_b' },
        ],
      },
      { kind: 'text', text: 'Sorry.' },
    )
    const res = await run(alice, agent.uuid, { input: 'Break it' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(weather.requests).toEqual([])
    const results = res.body.data.messages.find((m: { role: string }) => m.role === 'tool').parts
    expect(results.map((p: { tool_call_id: string; is_error: boolean }) => [p.tool_call_id, p.is_error])).toEqual([
      ['call_a', true],
      ['call_b', true],
    ])
    expect(res.body.data.run.output).toBe('Sorry.')
  })

  it('extracts memories after a run when metadata.memory is true and gives them to later runs; only the owner sees them', async () => {
    const agent = (await t.as(alice).agents.create({ name: 'Rememberer', metadata: { memory: true } } as never)).data
    upstream.respondWith((req) => {
      const system = (req.body.messages as { role: string; content: string }[]).find((m) => m.role === 'system')?.content ?? ''
      return system.startsWith('You extract durable facts') ? { kind: 'text', text: '["The user is called Ada"]' } : { kind: 'text', text: 'Noted.' }
    })
    expect((await run(alice, agent.uuid, { input: 'I am Ada' })).status).toBe(200)
    await vi.waitFor(
      async () => {
        const list = await t.http('GET', `/api/v1/memories?agent_uuid=${agent.uuid}`, { token: alice.token })
        expect(list.body.data.map((m: { content: string }) => m.content)).toEqual(['The user is called Ada'])
      },
      { timeout: 3000, interval: 50 },
    )
    expect((await t.http('GET', '/api/v1/memories', { token: bob.token })).body.data).toEqual([])
    await run(alice, agent.uuid, { input: 'Hello again' })
    const isExtraction = (r: (typeof upstream.requests)[number]) => String(r.body.messages[0].content).startsWith('You extract')
    const lastChat = upstream.requests.filter((r) => !isExtraction(r)).at(-1)
    expect(String(lastChat?.body.messages[0].content)).toContain('The user is called Ada')
    // The second run's extraction too (it runs after the answer), so it cannot land in the next test.
    await vi.waitFor(() => expect(upstream.requests.filter(isExtraction)).toHaveLength(2), { timeout: 3000, interval: 20 })
  })

  it('stores no memory for an agent without metadata.memory', async () => {
    const agent = (await t.as(alice).agents.create({ name: 'Forgetful' } as never)).data
    await run(alice, agent.uuid, { input: 'I am Ada' })
    expect(upstream.requests).toHaveLength(1)
    const list = await t.http('GET', `/api/v1/memories?agent_uuid=${agent.uuid}`, { token: alice.token })
    expect(list.body.data).toEqual([])
  })

  describe('threads.generateName (POST /api/v1/threads/{thread_uuid}/generate-name)', () => {
    it("names the thread with the agent's model from its first messages", async () => {
      const agent = (await t.as(alice).agents.create({ name: 'Namer' } as never)).data
      const thread = (await run(alice, agent.uuid, { input: 'Explain tides to children' })).body.data.run.thread_uuid
      upstream.enqueue({ kind: 'text', text: '"Tides for kids."\nextra line' })
      const res = await t.http('POST', `/api/v1/threads/${thread}/generate-name`, { token: alice.token })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toMatchObject({ uuid: thread, name: 'Tides for kids' })
      expect(String(upstream.requests.at(-1)?.body.messages.at(-1).content)).toContain('user: Explain tides to children')
    })

    it('answers 400 for a thread without messages, 404 for another tenant, 403 read-only, 401, 502 on an upstream failure', async () => {
      const agent = (await t.as(alice).agents.create({ name: 'Namer' } as never)).data
      const empty = await t.http('POST', '/api/v1/threads', { token: alice.token, body: { agent_uuid: agent.uuid } })
      expect(empty.status, JSON.stringify(empty.body)).toBe(201)
      const path = `/api/v1/threads/${empty.body.data.uuid}/generate-name`
      expectInvalid(await t.http('POST', path, { token: alice.token }), 'thread_uuid')
      expectErrorBody(await t.http('POST', path, { token: bob.token }), 404, 'NOT_FOUND', 'Thread not found')
      expectErrorBody(await t.http('POST', path, { token: (await readOnlyToken(t, alice)).token }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('POST', path), 401, 'UNAUTHORIZED')
      expectInvalid(await t.http('POST', '/api/v1/threads/0123-abcd/generate-name', { token: alice.token }), 'thread_uuid')
      const thread = (await run(alice, agent.uuid, { input: 'Hi' })).body.data.run.thread_uuid
      upstream.enqueue({ kind: 'status', status: 500 })
      expectErrorBody(await t.http('POST', `/api/v1/threads/${thread}/generate-name`, { token: alice.token }), 502, 'BAD_GATEWAY')
    })
  })

  describe.runIf(withRedis)('across API processes (Redis)', () => {
    let a: Node
    let b: Node
    beforeAll(async () => {
      a = await startNode(t)
      b = await startNode(t)
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
    })

    it('follows a run executing in process a from process b, and resumes with Last-Event-ID on either', async () => {
      const agent = (await t.as(alice).agents.create({ name: 'Remote' } as never)).data
      upstream.enqueue({ kind: 'slow', delayMs: 300 })
      const started = await a.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Far away', background: true } })
      expect(started.status).toBe(202)
      const uuid = started.body.data.run.uuid
      const followed = await readSse(`${b.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(followed.events.at(-1)?.event).toBe('run.succeeded')
      expect(followed.events.map((e) => Number(e.id))).toEqual(followed.events.map((_, i) => i + 1))
      const resumed = await readSse(`${a.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${alice.token}`, 'last-event-id': '1' })
      expect(resumed.events.map((e) => e.id)).toEqual(followed.events.slice(1).map((e) => e.id))
    })

    it('cancels from process b a run executing in process a', async () => {
      const agent = (await t.as(alice).agents.create({ name: 'Remote' } as never)).data
      upstream.enqueue({ kind: 'slow', delayMs: 2000 })
      const started = await a.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Stop', background: true } })
      const uuid = started.body.data.run.uuid
      await vi.waitFor(() => expect(upstream.pending()).toBe(1), { timeout: 2000 })
      expect((await b.http('POST', `/api/v1/runs/${uuid}/cancel`, { token: alice.token })).status).toBe(200)
      // Process a aborted its upstream call on the Redis message.
      await vi.waitFor(() => expect(upstream.pending()).toBe(0), { timeout: 2000 })
      const events = await readSse(`${b.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(events.events.at(-1)?.event).toBe('run.canceled')
    })
  })
})
