/**
 * What a run does beyond one answer: an agent's `api` tools called
 * over HTTP and stored in the events and the thread, memory extracted after a run and given to
 * later ones, thread names, and a run followed or cancelled from another API process.
 * The model is the real OpenAI provider client against test/helpers/upstream.ts.
 */
import { startWeatherServer, type WeatherServer } from './helpers/tool-server.ts'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid } from './helpers/expect.ts'
import { startNode, type Node } from './helpers/nodes.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

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
  })

  const run = (user: { token: string }, agentUuid: string, body: Record<string, unknown>) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: user.token, body })

  const weatherAgent = async () => {
    const tool = (
      await t.as(alice).tools.create({
        name: 'Weather',
        description: 'The forecast of a city',
        method: 'GET',
        url: `${weather.url}/weather?city={{city}}`,
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      } as never)
    ).data
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
