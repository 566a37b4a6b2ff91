/**
 * The OpenAI-compatible API (docs/api/openai.md) through the official `openai` npm package against
 * the running service: models, chat completions and responses, streaming and not, each an
 * ordinary stored run (read back over REST), threads continued, an agent's own HTTP tool, and
 * errors in OpenAI's shape. The agents' model is the real OpenAI provider client talking to
 * test/helpers/upstream.ts.
 */
import { startWeatherServer, type WeatherServer, weatherToolInput } from './helpers/tool-server.ts'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('OpenAI-compatible API (/api/v1/openai)', () => {
  let t: TestApp
  let upstream: Upstream
  let weather: WeatherServer
  let alice: TestUser
  let bob: TestUser
  let aliceKey: string
  let client: OpenAI

  beforeAll(async () => {
    upstream = await startUpstream()
    weather = await startWeatherServer()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, TOOL_ALLOW_PRIVATE_NETWORK: 'true' })
    alice = await t.make.user({ name: 'Alice SDK' })
    bob = await t.make.user({ name: 'Bob Other' })
    aliceKey = (await t.as(alice).accessTokens.create({ name: 'sdk' })).data.access_token
    client = sdk(aliceKey)
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

  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey, maxRetries: 0 })
  const makeAgent = async (user: TestUser, body: Record<string, unknown> = {}) =>
    (await t.as(user).agents.create({ name: `Helper ${Math.random().toString(36).slice(2, 8)}`, instruction: 'Answer briefly.', ...body } as never)).data
  const runOf = async (runUuid: string) => (await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })).body.data
  const threadMessages = async (threadUuid: string) =>
    (await t.as(alice).messages.list({ thread_uuid: threadUuid } as never)).data.map((m: { role: string; content: string }) => [m.role, m.content])
  const runsCount = async () => Number((await t.sql('select count(*)::int as n from runs'))[0].n)
  /** A raw request, to read status and body exactly as sent. */
  const raw = async (method: string, path: string, body?: unknown, apiKey: string | null = aliceKey) => {
    const response = await fetch(`${t.url}/api/v1/openai${path}`, {
      method,
      headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    return { status: response.status, body: await response.json() }
  }
  const expectOpenAiError = (res: { status: number; body: any }, status: number, fields: { param?: string | null; code?: string | null; type?: string }) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status)
    expect(Object.keys(res.body)).toEqual(['error'])
    expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message', 'param', 'type'])
    expect(typeof res.body.error.message).toBe('string')
    expect(res.body.error).toMatchObject(fields)
  }

  describe('GET /models/{model}', () => {
    it("answers one model by uuid, pinned version or unique name; another tenant's, a missing version or an unknown name is model_not_found", async () => {
      const mine = await makeAgent(alice)
      const theirs = await makeAgent(bob)
      const model = await client.models.retrieve(mine.uuid)
      expect(model).toMatchObject({ id: mine.uuid, object: 'model', owned_by: alice.workspaceUuid, name: mine.name })
      expect(typeof model.created).toBe('number')
      expect(await client.models.retrieve(`${mine.uuid}@1`)).toMatchObject({ id: `${mine.uuid}@1`, name: mine.name })
      const named = await makeAgent(alice, { name: `Unique ${Date.now()}` })
      expect((await client.models.retrieve(named.name)).id).toBe(named.uuid)
      // A read-only token may read a model; no token is OpenAI's 401.
      expect((await sdk((await readOnlyToken(t, alice)).token).models.retrieve(mine.uuid)).id).toBe(mine.uuid)
      await expect(sdk('wat_not-a-real-token').models.retrieve(mine.uuid)).rejects.toBeInstanceOf(OpenAI.AuthenticationError)
      for (const id of [theirs.uuid, `${mine.uuid}@99`, 'No such agent', `${mine.uuid}@0`]) {
        const error = await client.models.retrieve(id).catch((e: unknown) => e)
        expect(error, id).toBeInstanceOf(OpenAI.NotFoundError)
        expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found')
        expect(JSON.stringify((error as InstanceType<typeof OpenAI.NotFoundError>).error)).not.toContain(theirs.name)
      }
    })
  })

  describe('GET /models', () => {
    it("lists the agents the caller may run, not another tenant's", async () => {
      const mine = await makeAgent(alice)
      const theirs = await makeAgent(bob)
      const models = []
      for await (const model of client.models.list()) models.push(model)
      const ids = models.map((m) => m.id)
      expect(ids).toContain(mine.uuid)
      expect(ids).not.toContain(theirs.uuid)
      expect(models.find((m) => m.id === mine.uuid)).toMatchObject({ object: 'model', owned_by: alice.workspaceUuid })
      expect(models.every((m) => typeof m.created === 'number')).toBe(true)
    })

    it('accepts a basic token too, and a read-only token may list', async () => {
      const mine = await makeAgent(alice)
      const basic = await sdk(alice.token).models.list()
      expect(basic.data.map((m) => m.id)).toContain(mine.uuid)
      const readOnly = await sdk((await readOnlyToken(t, alice)).token).models.list()
      expect(readOnly.data.map((m) => m.id)).toContain(mine.uuid)
    })

    it("works in the token's bound workspace, or the one X-Workspace-UUID names", async () => {
      const primary = await makeAgent(alice)
      const other = await t.make.workspace(alice)
      const there = (await t.as(alice, { 'x-workspace-uuid': other.uuid }).agents.create({ name: 'Elsewhere', instruction: 'x' } as never)).data
      const bound = (await t.as(alice).accessTokens.create({ name: 'bound', workspace_uuid: other.uuid })).data.access_token
      const ids = (await sdk(bound).models.list()).data.map((m) => m.id)
      expect(ids).toContain(there.uuid)
      expect(ids).not.toContain(primary.uuid)
      const viaHeader = new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey: aliceKey, maxRetries: 0, defaultHeaders: { 'X-Workspace-UUID': other.uuid } })
      expect((await viaHeader.models.list()).data.map((m) => m.id)).toContain(there.uuid)
      const completion = await sdk(bound).chat.completions.create({ model: there.uuid, messages: [{ role: 'user', content: 'Bound' }] })
      expect(completion.choices[0].message.content).toBe('Echo: Bound')
    })
  })

  describe('POST /chat/completions', () => {
    it('answers a chat.completion with the content and usage; the run and its thread are stored like any run', async () => {
      const agent = await makeAgent(alice)
      const completion = await client.chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'Hello there' }] })
      expect(completion.object).toBe('chat.completion')
      expect(completion.model).toBe(agent.uuid)
      expect(completion.choices).toHaveLength(1)
      expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'Echo: Hello there' })
      expect(completion.choices[0].finish_reason).toBe('stop')
      expect(completion.choices[0].message.tool_calls).toBeUndefined()
      const { prompt_tokens, completion_tokens, total_tokens } = completion.usage!
      expect(prompt_tokens).toBeGreaterThan(0)
      expect(completion_tokens).toBeGreaterThan(0)
      expect(total_tokens).toBe(prompt_tokens + completion_tokens)
      const runUuid = completion.id.replace(/^chatcmpl-/, '')
      expect(runUuid).toMatch(UUID)
      const stored = await runOf(runUuid)
      expect(stored.run).toMatchObject({ kind: 'agent', status: 'succeeded', agent_uuid: agent.uuid, output: 'Echo: Hello there', input: 'Hello there' })
      expect(stored.usage).toMatchObject({ prompt_tokens, completion_tokens, total_tokens })
      expect((completion as unknown as { thread_uuid: string }).thread_uuid).toBe(stored.run.thread_uuid)
      expect(await threadMessages(stored.run.thread_uuid)).toEqual([
        ['user', 'Hello there'],
        ['assistant', 'Echo: Hello there'],
      ])
      // The agent's own instruction is the system prompt.
      const sent = upstream.requests.at(-1)?.body.messages
      expect(sent[0].role).toBe('system')
      expect(sent[0].content).toContain('Answer briefly.')
    })

    it("names the agent by its name too; the answer's headers name the run and thread", async () => {
      const agent = await makeAgent(alice, { name: 'Named Agent' })
      const { data, response } = await client.chat.completions.create({ model: 'Named Agent', messages: [{ role: 'user', content: 'By name' }] }).withResponse()
      expect(data.choices[0].message.content).toBe('Echo: By name')
      expect(data.model).toBe(agent.uuid)
      expect(response.headers.get('x-run-uuid')).toBe(data.id.replace('chatcmpl-', ''))
      expect(response.headers.get('x-thread-uuid')).toMatch(UUID)
    })

    it('stores the earlier messages of a new conversation in its thread, system messages after the agent instruction', async () => {
      const agent = await makeAgent(alice)
      const completion = await client.chat.completions.create({
        model: agent.uuid,
        messages: [
          { role: 'system', content: 'Speak like a pirate.' },
          { role: 'user', content: 'My name is Ada' },
          { role: 'assistant', content: 'Hello Ada' },
          { role: 'user', content: [{ type: 'text', text: 'What is my name?' }] },
        ],
      })
      expect(completion.choices[0].message.content).toBe('Echo: What is my name?')
      const sent = (upstream.requests.at(-1)?.body.messages as { role: string; content: string }[]).map((m) => [m.role, m.content])
      expect(sent[0][0]).toBe('system')
      expect(sent[0][1]).toContain('Answer briefly.')
      expect(sent.slice(1)).toEqual([
        ['system', 'Speak like a pirate.'],
        ['user', 'My name is Ada'],
        ['assistant', 'Hello Ada'],
        ['user', 'What is my name?'],
      ])
      const stored = await runOf(completion.id.replace('chatcmpl-', ''))
      expect(await threadMessages(stored.run.thread_uuid)).toEqual([
        ['system', 'Speak like a pirate.'],
        ['user', 'My name is Ada'],
        ['assistant', 'Hello Ada'],
        ['user', 'What is my name?'],
        ['assistant', 'Echo: What is my name?'],
      ])
    })

    it('continues a thread named by metadata.thread_uuid: only the new last user message is added', async () => {
      const agent = await makeAgent(alice)
      const first = await client.chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'One' }] })
      const threadUuid = (first as unknown as { thread_uuid: string }).thread_uuid
      const second = await client.chat.completions.create({
        model: agent.uuid,
        metadata: { thread_uuid: threadUuid },
        messages: [
          { role: 'user', content: 'One' },
          { role: 'assistant', content: 'Echo: One' },
          { role: 'user', content: 'Two' },
        ],
      })
      expect((second as unknown as { thread_uuid: string }).thread_uuid).toBe(threadUuid)
      expect(await threadMessages(threadUuid)).toEqual([
        ['user', 'One'],
        ['assistant', 'Echo: One'],
        ['user', 'Two'],
        ['assistant', 'Echo: Two'],
      ])
      const sent = (upstream.requests.at(-1)?.body.messages as { role: string; content: string }[]).slice(1).map((m) => m.content)
      expect(sent).toEqual(['One', 'Echo: One', 'Two'])
    })

    it('streams chat.completion.chunk deltas that join to the answer, then usage with include_usage, then [DONE]', async () => {
      const agent = await makeAgent(alice)
      const stream = await client.chat.completions.create({
        model: agent.uuid,
        messages: [{ role: 'user', content: 'Stream this please' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
      for await (const chunk of stream) chunks.push(chunk)
      expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id)).toBe(true)
      expect(chunks[0].choices[0].delta.role).toBe('assistant')
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')
      expect(text).toBe('Echo: Stream this please')
      expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1)
      expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop')
      const usage = chunks.at(-1)!
      expect(usage.choices).toEqual([])
      expect(usage.usage!.total_tokens).toBe(usage.usage!.prompt_tokens + usage.usage!.completion_tokens)
      const stored = await runOf(chunks[0].id.replace('chatcmpl-', ''))
      expect(stored.run).toMatchObject({ status: 'succeeded', output: 'Echo: Stream this please' })
      expect(stored.usage.total_tokens).toBe(usage.usage!.total_tokens)
      // The SDK's own helper reads the same stream into a completion.
      const runner = client.chat.completions.stream({ model: agent.uuid, messages: [{ role: 'user', content: 'Again' }] })
      expect((await runner.finalChatCompletion()).choices[0].message.content).toBe('Echo: Again')
    })

    it("runs the agent's own HTTP tool inside: the answer comes back, not tool_calls", async () => {
      const tool = (await t.as(alice).tools.create(weatherToolInput(weather) as never)).data
      const agent = await makeAgent(alice, { tools: [{ tool_uuid: tool.uuid }] })
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_1' }] }, { kind: 'text', text: 'Sunny in Oslo.' })
      const completion = await client.chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'Weather in Oslo?' }] })
      expect(weather.requests).toEqual(['/weather?city=Oslo'])
      expect(completion.choices[0].message.content).toBe('Sunny in Oslo.')
      expect(completion.choices[0].message.tool_calls).toBeUndefined()
      expect(completion.choices[0].finish_reason).toBe('stop')
      const stored = await runOf(completion.id.replace('chatcmpl-', ''))
      expect(stored.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])

      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Rome"}', id: 'call_2' }] }, { kind: 'text', text: 'Sunny in Rome.' })
      const { data: stream, response } = await client.chat.completions
        .create({ model: agent.uuid, messages: [{ role: 'user', content: 'And Rome?' }], stream: true })
        .withResponse()
      // A streaming client learns the run and its thread from the headers, as a non-streaming one does.
      const streamedRun = response.headers.get('x-run-uuid')
      expect(streamedRun).toMatch(/^[0-9a-f-]{36}$/)
      expect(response.headers.get('x-thread-uuid')).toBe((await runOf(streamedRun!)).run.thread_uuid)
      expect(response.headers.get('x-request-id')).toBeTruthy()
      let text = ''
      for await (const chunk of stream) {
        expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined()
        text += chunk.choices[0]?.delta.content ?? ''
      }
      expect(text).toBe('Sunny in Rome.')
      expect(weather.requests).toEqual(['/weather?city=Oslo', '/weather?city=Rome'])
    })

    it('accepts and ignores the parameters OpenAI accepts that an agent has no use for', async () => {
      const agent = await makeAgent(alice)
      const completion = await client.chat.completions.create({
        model: agent.uuid,
        messages: [{ role: 'developer', content: 'Be kind.' }, { role: 'user', content: 'Ignored params' }],
        temperature: 0.2,
        top_p: 0.9,
        n: 1,
        max_tokens: 50,
        max_completion_tokens: 50,
        presence_penalty: 0,
        frequency_penalty: 0,
        seed: 7,
        stop: ['\n\n'],
        user: 'end-user-42',
        store: false,
        parallel_tool_calls: false,
        tool_choice: 'none',
        tools: [],
        response_format: { type: 'text' },
        logprobs: false,
      })
      expect(completion.choices[0].message.content).toBe('Echo: Ignored params')
      expect(upstream.requests.at(-1)?.body.temperature).toBeUndefined()
    })
  })

  describe('POST /responses', () => {
    it('answers a response with output_text and usage; previous_response_id continues the thread', async () => {
      const agent = await makeAgent(alice)
      const first = await client.responses.create({ model: agent.uuid, input: 'My name is Ada', instructions: 'Use short sentences.' })
      expect(first).toMatchObject({ object: 'response', status: 'completed', model: agent.uuid, output_text: 'Echo: My name is Ada' })
      expect(first.id).toMatch(/^resp_/)
      expect(first.output).toEqual([
        { type: 'message', id: expect.any(String), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Echo: My name is Ada', annotations: [], logprobs: [] }] },
      ])
      expect(first.usage!.total_tokens).toBe(first.usage!.input_tokens + first.usage!.output_tokens)
      expect(first.usage!.input_tokens).toBeGreaterThan(0)

      const second = await client.responses.create({ model: agent.uuid, input: [{ role: 'user', content: 'What is my name?' }], previous_response_id: first.id })
      expect(second.output_text).toBe('Echo: What is my name?')
      expect(second.previous_response_id).toBe(first.id)
      const firstRun = await runOf(first.id.slice('resp_'.length))
      const secondRun = await runOf(second.id.slice('resp_'.length))
      expect(secondRun.run.thread_uuid).toBe(firstRun.run.thread_uuid)
      expect(await threadMessages(firstRun.run.thread_uuid)).toEqual([
        ['system', 'Use short sentences.'],
        ['user', 'My name is Ada'],
        ['assistant', 'Echo: My name is Ada'],
        ['user', 'What is my name?'],
        ['assistant', 'Echo: What is my name?'],
      ])
      const sent = (upstream.requests.at(-1)?.body.messages as { content: string }[]).slice(1).map((m) => m.content)
      expect(sent).toEqual(['Use short sentences.', 'My name is Ada', 'Echo: My name is Ada', 'What is my name?'])
    })

    it('streams the Responses events: created, text deltas, done, completed; the SDK accumulates them', async () => {
      const agent = await makeAgent(alice)
      const stream = await client.responses.create({ model: agent.uuid, input: 'Stream a response', stream: true })
      const events: OpenAI.Responses.ResponseStreamEvent[] = []
      for await (const event of stream) events.push(event)
      const types = events.map((e) => e.type)
      expect(types[0]).toBe('response.created')
      expect(types.at(-1)).toBe('response.completed')
      expect(types).toContain('response.output_text.done')
      const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []))
      expect(deltas.length).toBeGreaterThan(1)
      expect(deltas.join('')).toBe('Echo: Stream a response')
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
      const completed = events.at(-1)
      if (completed?.type !== 'response.completed') throw new Error('no response.completed')
      expect(completed.response.usage!.total_tokens).toBeGreaterThan(0)
      const threadUuid = (await runOf(completed.response.id.slice('resp_'.length))).run.thread_uuid
      expect(threadUuid).toMatch(/^[0-9a-f-]{36}$/)
      for (const event of events) {
        if ('response' in event) expect(event.response.metadata).toEqual({ thread_uuid: threadUuid })
      }

      const helper = client.responses.stream({ model: agent.uuid, input: 'Helper stream', previous_response_id: completed.response.id })
      const final = await helper.finalResponse()
      expect(final.output_text).toBe('Echo: Helper stream')
      const run = await runOf(final.id.slice('resp_'.length))
      expect(run.run.thread_uuid).toBe((await runOf(completed.response.id.slice('resp_'.length))).run.thread_uuid)
    })

    it('answers 400 naming previous_response_id for an unknown or foreign response', async () => {
      const agent = await makeAgent(alice)
      const bobAgent = await makeAgent(bob)
      const bobKey = (await t.as(bob).accessTokens.create({ name: 'bob' })).data.access_token
      const bobs = await sdk(bobKey).responses.create({ model: bobAgent.uuid, input: 'Secret' })
      const before = await runsCount()
      const res = await raw('POST', '/responses', { model: agent.uuid, input: 'Hi', previous_response_id: bobs.id })
      expectOpenAiError(res, 400, { param: 'previous_response_id', code: 'previous_response_not_found', type: 'invalid_request_error' })
      expect(JSON.stringify(res.body)).not.toContain('Secret')
      expect(await runsCount()).toBe(before)
    })
  })

  describe('errors in OpenAI shape', () => {
    it('answers 401 without a key or with a bad one (AuthenticationError)', async () => {
      const agent = await makeAgent(alice)
      await expect(sdk('wat_not-a-real-token').chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
        OpenAI.AuthenticationError,
      )
      await expect(sdk('wat_not-a-real-token').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError)
      expectOpenAiError(await raw('GET', '/models', undefined, null), 401, { code: 'invalid_api_key', param: null })
      expectOpenAiError(await raw('POST', '/chat/completions', { model: agent.uuid, messages: [] }, 'bad'), 401, { code: 'invalid_api_key' })
    })

    it("answers 404 model_not_found for an unknown model and for another tenant's agent (NotFoundError), storing nothing", async () => {
      const theirs = await makeAgent(bob, { name: 'Bobs Secret Agent' })
      const before = await runsCount()
      for (const model of ['no-such-agent', theirs.uuid, 'Bobs Secret Agent', '00000000-0000-4000-8000-000000000000']) {
        const error = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
        expect(error).toBeInstanceOf(OpenAI.NotFoundError)
        expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found')
      }
      await expect(client.responses.create({ model: theirs.uuid, input: 'x' })).rejects.toBeInstanceOf(OpenAI.NotFoundError)
      // A conversation that would seed a thread is refused the same way, and leaves none.
      const threadsBefore = Number((await t.sql('select count(*)::int as n from threads'))[0].n)
      expectOpenAiError(
        await raw('POST', '/chat/completions', { model: theirs.uuid, messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'x' }] }),
        404,
        { code: 'model_not_found', param: 'model' },
      )
      expect(Number((await t.sql('select count(*)::int as n from threads'))[0].n)).toBe(threadsBefore)
      expect(await runsCount()).toBe(before)
    })

    it('answers 400 naming the field for malformed messages and parameters OpenAI would reject, storing nothing', async () => {
      const agent = await makeAgent(alice)
      const before = await runsCount()
      const post = (body: Record<string, unknown>) => raw('POST', '/chat/completions', { model: agent.uuid, messages: [{ role: 'user', content: 'x' }], ...body })
      expectOpenAiError(await post({ messages: [] }), 400, { param: 'messages', type: 'invalid_request_error' })
      expectOpenAiError(await post({ messages: [{ role: 'tool', content: 'x', tool_call_id: 'a' }] }), 400, { param: 'messages[0].role' })
      expectOpenAiError(await post({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] }), 400, { param: 'messages[1].role' })
      expectOpenAiError(await post({ messages: [{ role: 'user' }] }), 400, { param: 'messages[0].content', code: 'missing_required_parameter' })
      expectOpenAiError(await post({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x' } }] }] }), 400, {
        param: 'messages[0].content[0].type',
      })
      expectOpenAiError(await post({ messages: [{ role: 'user', content: 'bad \u0000 char' }] }), 400, { param: 'messages[0].content' })
      expectOpenAiError(await post({ n: 2 }), 400, { param: 'n' })
      expectOpenAiError(await post({ tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }), 400, { param: 'tools' })
      expectOpenAiError(await post({ tool_choice: 'required' }), 400, { param: 'tool_choice' })
      expectOpenAiError(await post({ logprobs: true }), 400, { param: 'logprobs' })
      expectOpenAiError(await post({ response_format: { type: 'json_object' } }), 400, { param: 'response_format.type' })
      expectOpenAiError(await post({ temperature: 3 }), 400, { param: 'temperature' })
      expectOpenAiError(await post({ stream: 'yes' }), 400, { param: 'stream' })
      expectOpenAiError(await post({ frobnicate: true }), 400, { param: 'frobnicate', code: 'unknown_parameter' })
      expectOpenAiError(await post({ metadata: { thread_uuid: 'nope' } }), 400, { param: 'metadata.thread_uuid' })
      expectOpenAiError(await post({ metadata: { thread_uuid: '00000000-0000-4000-8000-000000000000' } }), 400, { param: 'metadata.thread_uuid', code: 'thread_not_found' })
      expectOpenAiError(await raw('POST', '/chat/completions', { messages: [{ role: 'user', content: 'x' }] }), 400, { param: 'model', code: 'missing_required_parameter' })
      expectOpenAiError(await raw('POST', '/chat/completions', '{"model": '), 400, { param: null, type: 'invalid_request_error' })
      expectOpenAiError(await raw('POST', '/responses', { model: agent.uuid, input: [{ type: 'function_call_output', call_id: 'c', output: 'x' }] }), 400, {
        param: 'input[0].type',
      })
      expectOpenAiError(await raw('POST', '/responses', { model: agent.uuid, input: 'x', previous_response_id: 'abc' }), 400, { param: 'previous_response_id' })
      expectOpenAiError(await raw('POST', '/responses', { model: agent.uuid, input: 'x', tools: [{ type: 'web_search' }] }), 400, { param: 'tools' })
      const viaSdk = await client.chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'x' }], n: 3 }).catch((e: unknown) => e)
      expect(viaSdk).toBeInstanceOf(OpenAI.BadRequestError)
      expect((viaSdk as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n')
      // A thread of another agent is no thread to continue with this model.
      const other = await makeAgent(alice)
      const elsewhere = await client.chat.completions.create({ model: other.uuid, messages: [{ role: 'user', content: 'x' }] })
      const threadUuid = (elsewhere as unknown as { thread_uuid: string }).thread_uuid
      const afterOther = await runsCount()
      expectOpenAiError(await post({ metadata: { thread_uuid: threadUuid } }), 400, { param: 'metadata.thread_uuid' })
      expect(await runsCount()).toBe(afterOther)
      expect(afterOther).toBe(before + 1)
    })

    it('answers 403 permission_denied to a read-only token: a run is a write (PermissionDeniedError)', async () => {
      const agent = await makeAgent(alice)
      const readOnly = sdk((await readOnlyToken(t, alice)).token)
      const before = await runsCount()
      await expect(readOnly.chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError)
      await expect(readOnly.responses.create({ model: agent.uuid, input: 'x' })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError)
      expect(await runsCount()).toBe(before)
    })

    it('answers 502 when the provider fails (the run stays stored, failed); a failing stream ends with an error the SDK throws', async () => {
      const agent = await makeAgent(alice)
      upstream.enqueue({ kind: 'status', status: 500 })
      const error = await client.chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
      expect((error as InstanceType<typeof OpenAI.APIError>).type).toBe('server_error')
      upstream.enqueue({ kind: 'status', status: 500 })
      const stream = await client.chat.completions.create({ model: agent.uuid, messages: [{ role: 'user', content: 'y' }], stream: true })
      await expect(
        (async () => {
          for await (const chunk of stream) void chunk
        })(),
      ).rejects.toBeInstanceOf(OpenAI.APIError)
      const [row] = await t.sql(`select status from runs r join agents a on a.id = r.agent_id where a.uuid = ? order by r.id desc limit 1`, [agent.uuid])
      expect(row.status).toBe('failed')
    })

    it('answers an unknown path or method under the prefix with a 404 in OpenAI shape', async () => {
      expectOpenAiError(await raw('GET', '/chat/completions'), 404, { type: 'invalid_request_error' })
      expectOpenAiError(await raw('POST', '/embeddings', { model: 'x', input: 'y' }), 404, { type: 'invalid_request_error' })
    })
  })
})
