/**
 * A2A (docs/api/a2a.md) through the SDK's own client (`A2AClient` of `@a2a-js/sdk/client`, with a
 * fetch that adds the bearer token) against the running service: the card, message/send and
 * message/stream as runs, tasks/get, tasks/cancel, tasks/resubscribe, contexts as threads, an
 * approval as input-required and its answer, JSON-RPC errors, 401 and another tenant's agent and
 * task. The agents' model is the real OpenAI provider client against test/helpers/upstream.ts; the
 * tool a real HTTP server.
 */
import { A2AClient } from '@a2a-js/sdk/client'
import type { Message, MessageSendParams, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { until } from './helpers/processes.ts'
import { startWeatherServer, type WeatherServer } from './helpers/tool-server.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

type StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent

describe('A2A (/api/v1/a2a/{agent_uuid})', () => {
  let t: TestApp
  let upstream: Upstream
  let weather: WeatherServer
  let alice: TestUser
  let bob: TestUser
  let aliceKey: string
  let agentUuid: string
  let carefulUuid: string
  let bobAgentUuid: string
  let client: A2AClient

  beforeAll(async () => {
    upstream = await startUpstream()
    weather = await startWeatherServer()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, TOOL_ALLOW_PRIVATE_NETWORK: 'true' })
    alice = await t.make.user({ name: 'Alice A2A' })
    bob = await t.make.user({ name: 'Bob Other' })
    aliceKey = (await t.as(alice).accessTokens.create({ name: 'a2a' })).data.access_token
    agentUuid = (
      await t.as(alice).agents.create({ name: 'Echoer', description: 'Answers briefly.', instruction: 'Answer briefly.' } as never)
    ).data.uuid
    bobAgentUuid = (await t.as(bob).agents.create({ name: 'Bobs', instruction: 'Answer.' } as never)).data.uuid
    const tool = (
      await t.as(alice).tools.create({
        name: 'Weather',
        description: 'The forecast of a city',
        method: 'GET',
        url: `${weather.url}/weather?city={{city}}`,
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        requires_approval: true,
      } as never)
    ).data
    carefulUuid = (await t.as(alice).agents.create({ name: 'Careful', tools: [{ tool_uuid: tool.uuid }] } as never)).data.uuid
    client = await clientFor(agentUuid, aliceKey)
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

  /** The SDK's fetch with the bearer token; the card's URL is APP_URL, which the test server listens beside. */
  const fetchWith =
    (token: string | null): typeof fetch =>
    (input, init) => {
      const url = String(input instanceof Request ? input.url : input).replace(t.config.appUrl, t.url)
      const headers = new Headers(init?.headers)
      if (token) headers.set('authorization', `Bearer ${token}`)
      return fetch(url, { ...init, headers })
    }
  const cardUrl = (uuid: string) => `${t.url}/api/v1/a2a/${uuid}/.well-known/agent-card.json`
  const clientFor = (uuid: string, token: string) => A2AClient.fromCardUrl(cardUrl(uuid), { fetchImpl: fetchWith(token) })
  const text = (value: string, extra: Partial<Message> = {}): MessageSendParams => ({
    message: { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text: value }], ...extra },
  })
  /** The task of a send, failing on a JSON-RPC error. */
  const taskOf = (res: Awaited<ReturnType<A2AClient['sendMessage']>>): Task => {
    if ('error' in res) throw new Error(JSON.stringify(res.error))
    expect(res.result.kind).toBe('task')
    return res.result as Task
  }
  const errorOf = (res: { error?: { code: number; message: string; data?: unknown } } | object) => {
    expect('error' in res, JSON.stringify(res)).toBe(true)
    return (res as { error: { code: number; message: string; data?: Record<string, unknown> } }).error
  }
  const collect = async (events: AsyncGenerator<StreamEvent>) => {
    const all: StreamEvent[] = []
    for await (const event of events) all.push(event)
    return all
  }
  const textOf = (task: Task) => task.artifacts?.[0]?.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('')
  /** A raw JSON-RPC request (what a client of another kind sends), with the contract checked by t.http. */
  const rpc = (method: string, params: unknown, token: string | null = aliceKey, uuid = agentUuid) =>
    t.http('POST', `/api/v1/a2a/${uuid}`, { ...(token ? { token } : {}), body: { jsonrpc: '2.0', id: 7, method, params } })
  const runOf = async (uuid: string) => (await t.http('GET', `/api/v1/runs/${uuid}`, { token: alice.token })).body.data
  /** The last user message of a chat completion request. */
  const lastUser = (body: any): string => {
    const content = body?.messages?.filter((m: { role: string }) => m.role === 'user').at(-1)?.content
    return typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part: { text?: string }) => part.text ?? '').join('')
        : ''
  }
  /** The model answers `input` after `ms`, everything else at once (by content, so no other request takes the slow reply). */
  const slowFor = (input: string, ms: number) =>
    upstream.respondWith((req) =>
      lastUser(req.body) === input
        ? { kind: 'slow', delayMs: ms, then: { kind: 'text', text: `Echo: ${input}` } }
        : { kind: 'text', text: `Echo: ${lastUser(req.body)}` },
    )

  describe('the agent card', () => {
    it('answers the card of an agent the caller may run: its JSON-RPC url, streaming, one skill, bearer security', async () => {
      const card = await client.getAgentCard()
      expect(card).toMatchObject({
        protocolVersion: '0.3.0',
        name: 'Echoer',
        description: 'Answers briefly.',
        url: `${t.config.appUrl}/api/v1/a2a/${agentUuid}`,
        preferredTransport: 'JSONRPC',
        version: '1',
        capabilities: { streaming: true, pushNotifications: false },
        defaultInputModes: ['text/plain'],
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        security: [{ bearer: [] }],
      })
      expect(card.skills).toHaveLength(1)
      const res = await t.http('GET', `/api/v1/a2a/${agentUuid}/.well-known/agent-card.json`, {
        token: (await readOnlyToken(t, alice)).token,
      })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(card)
    })

    it('answers 401 with WWW-Authenticate without a token, 404 for an agent the caller cannot run', async () => {
      const anonymous = await t.http('GET', `/api/v1/a2a/${agentUuid}/.well-known/agent-card.json`)
      expect(anonymous.status).toBe(401)
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer')
      const theirs = await t.http('GET', `/api/v1/a2a/${bobAgentUuid}/.well-known/agent-card.json`, { token: aliceKey })
      expect(theirs.status).toBe(404)
      expect(theirs.body.message).not.toContain('Bobs')
      expect((await t.http('GET', `/api/v1/a2a/${randomUUID()}/.well-known/agent-card.json`, { token: aliceKey })).status).toBe(404)
      await expect(clientFor(bobAgentUuid, aliceKey)).rejects.toThrow(/404/)
    })
  })

  describe('message/send', () => {
    it('runs the agent: a completed task whose id is the run and contextId its thread, with the answer as artifact and the history', async () => {
      const task = taskOf(await client.sendMessage(text('Hello there')))
      expect(task.status.state).toBe('completed')
      expect(textOf(task)).toBe('Echo: Hello there')
      expect(task.history?.map((m) => [m.role, m.parts[0]])).toEqual([
        ['user', { kind: 'text', text: 'Hello there' }],
        ['agent', { kind: 'text', text: 'Echo: Hello there' }],
      ])
      const run = await runOf(task.id)
      expect(run.run).toMatchObject({
        status: 'succeeded',
        agent_uuid: agentUuid,
        thread_uuid: task.contextId,
        output: 'Echo: Hello there',
      })
    })

    it('continues a known contextId in the same thread, queued behind a run in progress (if_busy: enqueue)', async () => {
      const first = taskOf(await client.sendMessage(text('One')))
      const second = taskOf(await client.sendMessage(text('Two', { contextId: first.contextId })))
      expect(second.contextId).toBe(first.contextId)
      expect(second.id).not.toBe(first.id)
      // The second run saw the first turn: the thread's history went to the model.
      const sent = upstream.requests.at(-1)?.body.messages.map((m: { role: string; content: unknown }) => m.role)
      expect(sent.filter((role: string) => role === 'user')).toHaveLength(2)

      // Slow enough that the next message finds it running, even on a loaded machine.
      slowFor('Slow', 2_000)
      const busy = taskOf(await client.sendMessage({ ...text('Slow', { contextId: first.contextId }), configuration: { blocking: false } }))
      expect(busy.status.state).toBe('working')
      const queued = taskOf(
        await client.sendMessage({ ...text('After', { contextId: first.contextId }), configuration: { blocking: false } }),
      )
      expect(queued.status.state).toBe('submitted')
      const done = await until(
        async () => taskOf(await client.getTask({ id: queued.id })),
        (task) => task.status.state === 'completed',
        10_000,
      )
      expect(textOf(done)).toBe('Echo: After')
    })

    it('answers a run the upstream failed as a failed task with its error', async () => {
      upstream.enqueue({ kind: 'status', status: 400, body: { error: { message: 'bad things', type: 'invalid_request_error' } } })
      const task = taskOf(await client.sendMessage(text('Break')))
      expect(task.status.state).toBe('failed')
      expect(task.status.message?.role).toBe('agent')
      expect((await runOf(task.id)).run.status).toBe('failed')
    })

    it('refuses bad params with -32602 naming the field, file parts with -32005, an unknown contextId', async () => {
      const cases: [unknown, string][] = [
        [{}, 'message'],
        [{ message: { kind: 'message', role: 'agent', messageId: 'm', parts: [{ kind: 'text', text: 'x' }] } }, 'message.role'],
        [{ message: { kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'x' }] } }, 'message.messageId'],
        [{ message: { kind: 'message', role: 'user', messageId: 'm', parts: [] } }, 'message.parts'],
        [{ message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 5 }] } }, 'message.parts[0].text'],
        [{ message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'text', text: '  ' }] } }, 'message.parts'],
        [
          { message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'x' }], contextId: 'nope' } },
          'message.contextId',
        ],
        [
          { message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'x' }], contextId: randomUUID() } },
          'message.contextId',
        ],
        [{ ...text('x'), configuration: { blocking: 'yes' } }, 'configuration.blocking'],
        [{ ...text('x'), configuration: { historyLength: -1 } }, 'configuration.historyLength'],
        [{ message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'data', data: { a: 1 } }] } }, 'message.parts'],
      ]
      for (const [params, field] of cases) {
        const res = await rpc('message/send', params)
        expect(res.status).toBe(200)
        expect(res.body.error, JSON.stringify(params)).toMatchObject({ code: -32602, data: { field } })
        expect(res.body.id).toBe(7)
      }
      const file = await rpc('message/send', {
        message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'file', file: { uri: 'https://example.com/a.pdf' } }] },
      })
      expect(file.body.error).toMatchObject({ code: -32005, data: { field: 'message.parts[0].kind' } })
      // Bob's thread is no context of Alice's.
      const bobs = taskOf(await (await clientFor(bobAgentUuid, bob.token)).sendMessage(text('Mine')))
      expect(errorOf(await client.sendMessage(text('x', { contextId: bobs.contextId }))).code).toBe(-32602)
      // Only Bob's message reached the model (a thread's name may be asked for besides).
      expect(upstream.requests.filter((req) => JSON.stringify(req.body).includes('"x"'))).toHaveLength(0)
    })

    it('refuses a read-only token with -32000 (status 403); it may still read tasks', async () => {
      const task = taskOf(await client.sendMessage(text('Readable')))
      const reader = await readOnlyToken(t, alice)
      const readOnly = await clientFor(agentUuid, reader.token)
      expect(errorOf(await readOnly.sendMessage(text('No'))).code).toBe(-32000)
      expect(errorOf(await readOnly.sendMessage(text('No'))).data).toEqual({ status: 403 })
      expect(errorOf(await readOnly.cancelTask({ id: task.id })).code).toBe(-32000)
      expect(taskOf(await readOnly.getTask({ id: task.id })).id).toBe(task.id)
    })
  })

  describe('message/stream', () => {
    it('streams the task, working, the answer as artifact chunks, then completed (final)', async () => {
      const events = await collect(client.sendMessageStream(text('Stream me')))
      const [first, ...rest] = events
      expect(first.kind).toBe('task')
      const task = first as Task
      expect(['submitted', 'working']).toContain(task.status.state)
      const chunks = rest.filter((e): e is TaskArtifactUpdateEvent => e.kind === 'artifact-update')
      expect(chunks.map((c) => c.artifact.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('')).join('')).toBe('Echo: Stream me')
      expect(chunks.at(-1)?.lastChunk).toBe(true)
      expect(chunks.every((c) => c.taskId === task.id && c.contextId === task.contextId)).toBe(true)
      const last = events.at(-1) as TaskStatusUpdateEvent
      expect(last).toMatchObject({ kind: 'status-update', taskId: task.id, final: true, status: { state: 'completed' } })
      expect((await runOf(task.id)).run.status).toBe('succeeded')

      // Over plain HTTP: Server-Sent Events, each a JSON-RPC response with the request's id.
      const res = await t.http('POST', `/api/v1/a2a/${agentUuid}`, {
        token: aliceKey,
        body: { jsonrpc: '2.0', id: 'abc', method: 'message/stream', params: text('Raw') },
      })
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
      const frames = String(res.body)
        .split('\n\n')
        .filter((block) => block.startsWith('data: '))
        .map((block) => JSON.parse(block.slice(6)))
      expect(frames.every((frame) => frame.jsonrpc === '2.0' && frame.id === 'abc')).toBe(true)
      expect(frames.at(-1).result).toMatchObject({ kind: 'status-update', final: true })
    })

    it('ends with a JSON-RPC error event for bad params', async () => {
      const error = await collect(
        client.sendMessageStream({ message: { kind: 'message', role: 'user', messageId: 'm', parts: [] } }),
      ).catch((e: unknown) => e as Error)
      expect(String(error)).toMatch(/-32602/)
    })
  })

  describe('tasks', () => {
    it('tasks/get answers a task with historyLength; an unknown task or another tenant’s is -32001', async () => {
      const task = taskOf(await client.sendMessage(text('Keep me')))
      const got = taskOf(await client.getTask({ id: task.id, historyLength: 1 }))
      expect(got).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: 'completed' } })
      expect(got.history).toHaveLength(1)
      expect(got.history?.[0].role).toBe('agent')
      expect(errorOf(await client.getTask({ id: randomUUID() })).code).toBe(-32001)
      expect(errorOf(await client.getTask({ id: 'not-a-uuid' })).code).toBe(-32001)
      const bobs = taskOf(await (await clientFor(bobAgentUuid, bob.token)).sendMessage(text('Secret of Bob')))
      const other = errorOf(await client.getTask({ id: bobs.id }))
      expect(other.code).toBe(-32001)
      expect(JSON.stringify(other)).not.toContain('Secret')
      // Bob's own task through Alice's agent's endpoint: not his agent's endpoint.
      expect((await rpc('tasks/get', { id: bobs.id }, bob.token)).status).toBe(404)
      // Alice's task of another agent through this agent's endpoint: not found either.
      const careful = await clientFor(carefulUuid, aliceKey)
      expect(errorOf(await careful.getTask({ id: task.id })).code).toBe(-32001)
    })

    it('tasks/cancel cancels a task in progress; an ended one is -32002', async () => {
      slowFor('Long', 5_000)
      const task = taskOf(await client.sendMessage({ ...text('Long'), configuration: { blocking: false } }))
      const canceled = taskOf(await client.cancelTask({ id: task.id }))
      expect(canceled.status.state).toBe('canceled')
      expect(canceled.status.message?.parts[0]).toMatchObject({ kind: 'text' })
      expect((await runOf(task.id)).run.status).toBe('canceled')
      expect(errorOf(await client.cancelTask({ id: task.id })).code).toBe(-32002)
      expect(errorOf(await client.cancelTask({ id: randomUUID() })).code).toBe(-32001)
    })

    it('tasks/resubscribe on an ended task answers its final state and ends; on a task in progress follows it to the end', async () => {
      const task = taskOf(await client.sendMessage(text('Done already')))
      const events = await collect(client.resubscribeTask({ id: task.id }))
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } })

      slowFor('Follow', 400)
      const running = taskOf(await client.sendMessage({ ...text('Follow'), configuration: { blocking: false } }))
      const followed = await collect(client.resubscribeTask({ id: running.id }))
      expect(followed[0]).toMatchObject({ kind: 'task', id: running.id })
      expect(followed.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } })
      const unknown = await collect(client.resubscribeTask({ id: randomUUID() })).catch((e: unknown) => e as Error)
      expect(String(unknown)).toMatch(/-32001/)
    })
  })

  describe('approvals', () => {
    it('a tool call that needs approval is input-required; a message with the taskId and {approve: true} goes on to completed', async () => {
      const careful = await clientFor(carefulUuid, aliceKey)
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: JSON.stringify({ city: 'Oslo' }), id: 'call_w' }] })
      const waiting = taskOf(await careful.sendMessage(text('Weather in Oslo?')))
      expect(waiting.status.state).toBe('input-required')
      const data = waiting.status.message?.parts.find((part) => part.kind === 'data')
      expect(data).toMatchObject({ kind: 'data', data: { approvals: [{ tool_name: 'weather', arguments: { city: 'Oslo' } }] } })
      expect(weather.requests).toHaveLength(0)

      // Text is no decision.
      expect(errorOf(await careful.sendMessage(text('yes', { taskId: waiting.id }))).code).toBe(-32602)
      const decision: MessageSendParams = {
        message: {
          kind: 'message',
          role: 'user',
          messageId: randomUUID(),
          taskId: waiting.id,
          contextId: waiting.contextId,
          parts: [{ kind: 'data', data: { approve: true } }],
        },
      }
      const done = taskOf(await careful.sendMessage(decision))
      expect(done.id).toBe(waiting.id)
      expect(done.status.state).toBe('completed')
      expect(weather.requests).toHaveLength(1)
      // The task no longer waits.
      expect(errorOf(await careful.sendMessage(decision)).data).toMatchObject({ field: 'message.taskId' })

      // Streamed: the stream ends with input-required (final).
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: JSON.stringify({ city: 'Bergen' }), id: 'call_b' }] })
      const events = await collect(careful.sendMessageStream(text('Weather in Bergen?')))
      expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'input-required' } })
      const streamed = events[0] as Task
      const denied = taskOf(
        await careful.sendMessage({
          ...decision,
          message: {
            ...decision.message,
            messageId: randomUUID(),
            taskId: streamed.id,
            contextId: undefined,
            parts: [{ kind: 'data', data: { approve: false, reason: 'Not now' } }],
          },
        }),
      )
      expect(denied.status.state).toBe('completed')
      expect(weather.requests).toHaveLength(1)
    })
  })

  describe('JSON-RPC and HTTP errors', () => {
    it('answers -32601 for an unknown method, -32700 for a body that is not JSON, -32600 for no JSON-RPC request, -32003 for push notifications', async () => {
      const unknown = await rpc('tasks/list', {})
      expect(unknown.status).toBe(200)
      expect(unknown.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } })
      const notJson = await t.http('POST', `/api/v1/a2a/${agentUuid}`, {
        token: aliceKey,
        rawBody: '{nope',
        headers: { 'content-type': 'application/json' },
      })
      expect(notJson.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
      const notRpc = await t.http('POST', `/api/v1/a2a/${agentUuid}`, { token: aliceKey, body: { hello: 'world' } })
      expect(notRpc.body.error.code).toBe(-32600)
      expect((await rpc('message/send', [1, 2])).body.error.code).toBe(-32602)
      const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`
      const nested = await t.http('POST', `/api/v1/a2a/${agentUuid}`, {
        token: aliceKey,
        rawBody: `{"jsonrpc":"2.0","id":${deep},"method":"tasks/get","params":{}}`,
        headers: { 'content-type': 'application/json' },
      })
      expect(nested.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
      expect(
        (await rpc('tasks/pushNotificationConfig/set', { taskId: randomUUID(), pushNotificationConfig: { url: 'https://x.example' } })).body
          .error.code,
      ).toBe(-32003)
    })

    it("answers 401 without a valid token and 404 for another tenant's agent, before any JSON-RPC", async () => {
      const anonymous = await rpc('message/send', text('x'), null)
      expect(anonymous.status).toBe(401)
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer')
      expect((await rpc('message/send', text('x'), 'not-a-token')).status).toBe(401)
      const theirs = await rpc('message/send', text('x'), aliceKey, bobAgentUuid)
      expect(theirs.status).toBe(404)
      expect((await rpc('message/send', text('x'), aliceKey, 'not-a-uuid')).status).toBe(404)
      expect(upstream.requests.filter((req) => JSON.stringify(req.body).includes('"x"'))).toHaveLength(0)
      const wrongType = await t.http('POST', `/api/v1/a2a/${agentUuid}`, {
        token: aliceKey,
        rawBody: 'x',
        headers: { 'content-type': 'text/plain' },
      })
      expect(wrongType.status).toBe(415)
    })
  })
})
