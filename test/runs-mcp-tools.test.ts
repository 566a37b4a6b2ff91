/**
 * Tools of type `mcp` (docs/api/mcp-tools.md; routers/tools.router.ts, src/runs/tool-mcp.ts): created
 * and checked over REST, then offered to an agent's model during a run and called against a real
 * MCP server that the test starts on loopback with the official SDK (`McpServer` over
 * `StreamableHTTPServerTransport` on a node:http server). The model is the real OpenAI provider
 * client against test/helpers/upstream.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, hiddenCheck } from './helpers/expect.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

const SECRET = 'mcp-secret-0123456789-abcdef'
/** TOOL_TIMEOUT_MS of the app: short, so a hanging server fails a call quickly. */
const TIMEOUT_MS = 1500
/** TOOL_MAX_RESPONSE_BYTES of the app: far above what initialize and tools/list answer. */
const MAX_BYTES = 64 * 1024

/** What the MCP server received: each HTTP request's path, JSON-RPC method and credential, and each weather call. */
interface Received {
  requests: { path: string; method: string; authorization: string | undefined }[]
  weatherCalls: { city: string; authorization: string | undefined }[]
}

/** A fresh MCP server (stateless: one per request) with `get_weather`, `whoami` (echoes the credential) and `lookup_fails` (an isError result). */
function weatherServer(received: Received): McpServer {
  const server = new McpServer({ name: 'weather', version: '1.0.0' })
  server.registerTool('get_weather', { description: 'The forecast of a city', inputSchema: { city: z.string() } }, async ({ city }, extra) => {
    const authorization = extra.requestInfo?.headers.authorization
    received.weatherCalls.push({ city, authorization: typeof authorization === 'string' ? authorization : undefined })
    return { content: [{ type: 'text', text: `Sunny in ${city}` }] }
  })
  server.registerTool('whoami', { description: 'Echoes the credential it got', inputSchema: {} }, async (_args, extra) => ({
    content: [{ type: 'text', text: `You sent ${String(extra.requestInfo?.headers.authorization)}` }],
  }))
  server.registerTool('lookup_fails', { description: 'Always fails', inputSchema: { city: z.string() } }, async ({ city }) => ({
    isError: true,
    content: [{ type: 'text', text: `No such city: ${city}` }],
  }))
  return server
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text ? JSON.parse(text) : undefined
}

/**
 * The MCP server on loopback. By path: `/mcp` is a well-behaved server; `/hang` never answers a
 * `tools/call`; `/garbage` answers a `tools/call` with text that is not JSON-RPC; `/huge` answers
 * it with more than TOOL_MAX_RESPONSE_BYTES; `/broken`
 * answers everything with an HTML page.
 */
async function startMcp(received: Received): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const body = await readBody(req)
      const method = typeof body === 'object' && body !== null && 'method' in body ? String(body.method) : req.method ?? ''
      const path = new URL(req.url ?? '/', 'http://x').pathname
      received.requests.push({ path, method, authorization: req.headers.authorization })
      if (path === '/broken') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Welcome</html>')
        return
      }
      if (path === '/hang' && method === 'tools/call') return
      if (path === '/huge' && method === 'tools/call') {
        const id = typeof body === 'object' && body !== null && 'id' in body ? body.id : null
        const result = { content: [{ type: 'text', text: 'x'.repeat(MAX_BYTES + 1) }] }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }))
        return
      }
      if (path === '/garbage' && method === 'tools/call') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"this is": not json-rpc')
        return
      }
      const mcp = weatherServer(received)
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
      res.on('close', () => {
        void transport.close()
        void mcp.close()
      })
      await mcp.connect(transport)
      await transport.handleRequest(req, res, body)
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe('tools of type mcp', () => {
  let t: TestApp
  let upstream: Upstream
  let mcp: { url: string; close: () => Promise<void> }
  const received: Received = { requests: [], weatherCalls: [] }
  let alice: TestUser
  let bob: TestUser
  let provider: { uuid: string }
  let account: { uuid: string }

  beforeAll(async () => {
    upstream = await startUpstream()
    mcp = await startMcp(received)
    t = await createTestApp({
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
      TOOL_TIMEOUT_MS: String(TIMEOUT_MS),
      TOOL_MAX_RESPONSE_BYTES: String(MAX_BYTES),
    })
    alice = await t.make.user({ name: 'Alice Mcp' })
    bob = await t.make.user({ name: 'Bob Mcp' })
    provider = (await t.as(alice).providers.create({ name: 'Weather MCP host', type: 'tool', base_url: mcp.url, auth_scheme: 'bearer' })).data
    account = (await t.as(alice).accounts.create({ name: 'Weather key', provider_uuid: provider.uuid, secret: SECRET })).data
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
    await mcp?.close()
  })
  beforeEach(() => {
    upstream.reset()
    received.requests.length = 0
    received.weatherCalls.length = 0
  })

  const create = (user: { token: string }, body: Record<string, unknown>) => t.http('POST', '/api/v1/tools', { token: user.token, body })
  const mcpBody = (overrides: Record<string, unknown> = {}) => ({ name: 'Weather MCP', type: 'mcp', url: `${mcp.url}/mcp`, provider_uuid: provider.uuid, ...overrides })
  const row = async (uuid: string) => (await t.sql('select name, url, method, type, allowed_tools, input_schema from tools where uuid = ?', [uuid]))[0]
  const expectHidden = hiddenCheck('Tool')

  describe('tools.create and tools.update (POST, PUT /api/v1/tools) with type mcp', () => {
    it('answers 201 with type mcp, method POST, an empty input_schema and allowed_tools; retrieve and update agree', async () => {
      const res = await create(alice, mcpBody({ allowed_tools: ['get_weather'] }))
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data).toMatchObject({
        type: 'mcp',
        method: 'POST',
        url: `${mcp.url}/mcp`,
        input_schema: {},
        allowed_tools: ['get_weather'],
        provider: { uuid: provider.uuid },
      })
      const again = await t.http('GET', `/api/v1/tools/${res.body.data.uuid}`, { token: alice.token })
      expect(again.body.data).toEqual(res.body.data)
      // Sending the answer's own fields back is accepted; null offers every remote tool.
      const put = await t.http('PUT', `/api/v1/tools/${res.body.data.uuid}`, {
        token: alice.token,
        body: { type: 'mcp', method: 'POST', input_schema: {}, allowed_tools: null, url: `${mcp.url}/mcp?v=2` },
      })
      expect(put.status, JSON.stringify(put.body)).toBe(200)
      expect(put.body.data).toMatchObject({ allowed_tools: null, url: `${mcp.url}/mcp?v=2` })
      expect(await row(res.body.data.uuid)).toMatchObject({ allowed_tools: null, method: 'POST', type: 'mcp' })
    })

    it.each([
      ['an ftp url', { url: 'ftp://mcp.test/mcp' }, 'url'],
      ['a relative url', { url: '/mcp' }, 'url'],
      ['a url with a placeholder', { url: 'https://mcp.test/{{tenant}}/mcp' }, 'url'],
      ['a method other than POST', { method: 'GET' }, 'method'],
      ['a non-empty input_schema', { input_schema: { type: 'object', properties: { city: { type: 'string' } } } }, 'input_schema'],
      ['allowed_tools that is not a list', { allowed_tools: 'get_weather' }, 'allowed_tools'],
      ['allowed_tools with an empty name', { allowed_tools: [''] }, 'allowed_tools.0'],
      ['allowed_tools with a repeated name', { allowed_tools: ['get_weather', 'get_weather'] }, 'allowed_tools.1'],
      ['allowed_tools with a name over 128 characters', { allowed_tools: ['x'.repeat(129)] }, 'allowed_tools.0'],
      ['allowed_tools with over 100 names', { allowed_tools: Array.from({ length: 101 }, (_, i) => `tool_${i}`) }, 'allowed_tools'],
    ])('answers 400 naming the field for %s, creating nothing', async (_label, overrides, path) => {
      const res = await create(alice, mcpBody({ name: 'Refused MCP', ...overrides }))
      expectInvalid(res, path)
      expect(await t.sql('select 1 from tools where name = ?', ['Refused MCP'])).toHaveLength(0)
    })

    it('answers 400 naming the field for a changed type, allowed_tools on an api tool and a placeholder in an mcp url; nothing changes', async () => {
      const tool = (await create(alice, mcpBody())).body.data
      const api = (await create(alice, { name: 'Plain api', url: 'https://api.test/x' })).body.data
      const before = await row(tool.uuid)
      expectInvalid(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: alice.token, body: { type: 'api', name: 'Changed' } }), 'type')
      expectInvalid(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: alice.token, body: { url: 'https://mcp.test/{{x}}' } }), 'url')
      expectInvalid(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: alice.token, body: { method: 'DELETE' } }), 'method')
      expectInvalid(await t.http('PUT', `/api/v1/tools/${api.uuid}`, { token: alice.token, body: { allowed_tools: ['x'] } }), 'allowed_tools')
      expectInvalid(await t.http('PUT', `/api/v1/tools/${api.uuid}`, { token: alice.token, body: { type: 'mcp' } }), 'type')
      expect(await row(tool.uuid)).toEqual(before)
      expect((await row(api.uuid)).type).toBe('api')
    })

    it("answers 401 without a token, 403 for a read-only token, 404 for another tenant's mcp tool; nothing is created or changed", async () => {
      expectErrorBody(await t.http('POST', '/api/v1/tools', { body: mcpBody({ name: 'No token MCP' }) }), 401, 'UNAUTHORIZED')
      const reader = await readOnlyToken(t, alice)
      expectErrorBody(await create(reader, mcpBody({ name: 'Read only MCP' })), 403, 'FORBIDDEN')
      expect(await t.sql(`select 1 from tools where name in ('No token MCP', 'Read only MCP')`)).toHaveLength(0)
      const tool = (await create(alice, mcpBody({ name: 'Private MCP' }))).body.data
      const before = await row(tool.uuid)
      expectHidden(await t.http('GET', `/api/v1/tools/${tool.uuid}`, { token: bob.token }), tool)
      expectHidden(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: bob.token, body: { url: 'https://evil.test/mcp' } }), tool)
      expectErrorBody(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: reader.token, body: { allowed_tools: ['x'] } }), 403, 'FORBIDDEN')
      expect(await row(tool.uuid)).toEqual(before)
    })
  })

  describe('runs of an agent with an mcp tool', () => {
    const run = (agentUuid: string, body: Record<string, unknown>) => t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: alice.token, body })
    const eventsOf = async (runUuid: string) =>
      (await readSse(`${t.url}/api/v1/runs/${runUuid}/events`, { authorization: `Bearer ${alice.token}` })).events.map((event) => ({
        type: event.event,
        data: JSON.parse(event.data).data,
      }))
    const offered = (index = 0) => ((upstream.requests[index].body.tools ?? []) as { function: { name: string; parameters: unknown } }[])
    /** An agent of Alice bound to a new mcp tool at `path` of the MCP server, with the account. */
    const agentWith = async (path: string, overrides: Record<string, unknown> = {}) => {
      const tool = (await create(alice, mcpBody({ url: `${mcp.url}${path}`, ...overrides }))).body.data
      const agent = (await t.as(alice).agents.create({ name: 'Forecaster', tools: [{ tool_uuid: tool.uuid, account_uuid: account.uuid }] } as never)).data
      return { tool, agent }
    }

    it("offers the server's tools as <tool>__<name>, calls one with the arguments and the account's secret, stores call and result", async () => {
      const { agent } = await agentWith('/mcp')
      upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'weather_mcp__get_weather', arguments: '{"city":"Paris"}', id: 'call_1' }] },
        { kind: 'text', text: 'Sunny in Paris.' },
      )
      const res = await run(agent.uuid, { input: 'Weather in Paris?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'Sunny in Paris.', warnings: [] })
      expect(offered().map((tool) => tool.function.name).sort()).toEqual(['weather_mcp__get_weather', 'weather_mcp__lookup_fails', 'weather_mcp__whoami'])
      const weather = offered().find((tool) => tool.function.name === 'weather_mcp__get_weather')
      expect(weather?.function.parameters).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] })

      expect(received.weatherCalls).toEqual([{ city: 'Paris', authorization: `Bearer ${SECRET}` }])
      expect(received.requests.every((request) => request.authorization === `Bearer ${SECRET}`)).toBe(true)
      expect(received.requests.map((request) => request.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']))

      const messages = res.body.data.messages
      expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
      expect(messages[1].parts).toEqual([{ type: 'tool-call', tool_call_id: 'call_1', tool_name: 'weather_mcp__get_weather', input: { city: 'Paris' } }])
      expect(messages[2].parts).toEqual([
        { type: 'tool-result', tool_call_id: 'call_1', tool_name: 'weather_mcp__get_weather', output: 'Sunny in Paris', is_error: false },
      ])
      expect((upstream.requests[1].body.messages as { role: string; content: string }[]).find((m) => m.role === 'tool')?.content).toContain('Sunny in Paris')

      const events = await eventsOf(res.body.data.run.uuid)
      expect(events.find((event) => event.type === 'tool.call')?.data).toEqual(messages[1].parts[0])
      expect(events.find((event) => event.type === 'tool.result')?.data).toEqual(messages[2].parts[0])
      expect(JSON.stringify(events)).not.toContain(SECRET)
    })

    it('offers only allowed_tools, and scrubs the secret from a result that echoes it', async () => {
      const { agent } = await agentWith('/mcp', { name: 'Echo MCP', allowed_tools: ['whoami', 'not_on_the_server'] })
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'echo_mcp__whoami', arguments: '{}', id: 'call_w' }] }, { kind: 'text', text: 'Done.' })
      const res = await run(agent.uuid, { input: 'Who am I?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(offered().map((tool) => tool.function.name)).toEqual(['echo_mcp__whoami'])
      const result = res.body.data.messages[2].parts[0]
      expect(result).toMatchObject({ tool_name: 'echo_mcp__whoami', output: 'You sent Bearer [redacted]', is_error: false })
      const events = await eventsOf(res.body.data.run.uuid)
      expect(JSON.stringify(events)).not.toContain(SECRET)
      expect(JSON.stringify(upstream.requests[1].body)).not.toContain(SECRET)
    })

    it('reports an isError result to the model as a failed call; the run goes on', async () => {
      const { agent } = await agentWith('/mcp')
      upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'weather_mcp__lookup_fails', arguments: '{"city":"Atlantis"}', id: 'call_x' }] },
        { kind: 'text', text: 'It does not exist.' },
      )
      const res = await run(agent.uuid, { input: 'Weather in Atlantis?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'It does not exist.' })
      expect(res.body.data.messages[2].parts[0]).toEqual({
        type: 'tool-result',
        tool_call_id: 'call_x',
        tool_name: 'weather_mcp__lookup_fails',
        output: { error: 'The MCP tool lookup_fails answered an error: No such city: Atlantis' },
        is_error: true,
      })
    })

    it('fails a call to a server that never answers tools/call after TOOL_TIMEOUT_MS; the model answers and the run succeeds', async () => {
      const { agent } = await agentWith('/hang', { name: 'Slow MCP' })
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'slow_mcp__get_weather', arguments: '{"city":"Paris"}', id: 'call_h' }] }, { kind: 'text', text: 'The forecast is unavailable.' })
      const started = performance.now()
      const res = await run(agent.uuid, { input: 'Weather in Paris?' })
      const elapsed = performance.now() - started
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'The forecast is unavailable.' })
      const result = res.body.data.messages[2].parts[0]
      expect(result).toMatchObject({ tool_call_id: 'call_h', is_error: true })
      expect(result.output.error).toMatch(new RegExp(`did not answer within TOOL_TIMEOUT_MS \\(${TIMEOUT_MS} ms\\)`))
      expect(received.requests.filter((request) => request.method === 'tools/call')).toHaveLength(1)
    })

    it('fails a call answered with something that is not JSON-RPC; the run goes on', async () => {
      const { agent } = await agentWith('/garbage', { name: 'Garbage MCP' })
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'garbage_mcp__get_weather', arguments: '{"city":"Paris"}', id: 'call_g' }] }, { kind: 'text', text: 'No forecast.' })
      const res = await run(agent.uuid, { input: 'Weather in Paris?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'No forecast.' })
      const result = res.body.data.messages[2].parts[0]
      expect(result).toMatchObject({ tool_call_id: 'call_g', is_error: true })
      expect(result.output.error).toMatch(/answered something that is not an MCP \(JSON-RPC\) message/)
      expect(JSON.stringify(res.body)).not.toContain(SECRET)
    })

    it('fails a call whose answer is larger than TOOL_MAX_RESPONSE_BYTES; the run goes on', async () => {
      const { agent } = await agentWith('/huge', { name: 'Huge MCP' })
      upstream.enqueue({ kind: 'tool_calls', calls: [{ name: 'huge_mcp__get_weather', arguments: '{"city":"Paris"}', id: 'call_l' }] }, { kind: 'text', text: 'Too much.' })
      const res = await run(agent.uuid, { input: 'Weather in Paris?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'Too much.' })
      const result = res.body.data.messages[2].parts[0]
      expect(result).toMatchObject({ tool_call_id: 'call_l', is_error: true })
      expect(result.output.error).toMatch(new RegExp(`larger than TOOL_MAX_RESPONSE_BYTES \\(${MAX_BYTES} bytes\\)`))
    })

    it('goes on without the tools of a server that cannot be listed, with a run.warning naming the tool', async () => {
      const { agent } = await agentWith('/broken', { name: 'Broken MCP' })
      const res = await run(agent.uuid, { input: 'Weather in Paris?' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const warning = { code: 'mcp_tools_unavailable', message: expect.stringContaining('The MCP tool "Broken MCP" could not list its tools') }
      expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'Echo: Weather in Paris?', warnings: [warning] })
      expect(upstream.requests).toHaveLength(1)
      expect(upstream.requests[0].body.tools).toBeUndefined()
      const read = await t.http('GET', `/api/v1/runs/${res.body.data.run.uuid}`, { token: alice.token })
      expect(read.body.data.run.warnings).toEqual([warning])
      const events = await eventsOf(res.body.data.run.uuid)
      expect(events.find((event) => event.type === 'run.warning')?.data).toEqual(warning)
      expect(JSON.stringify(events)).not.toContain(SECRET)
    })
  })

  describe('the outbound guard', () => {
    it('refuses a loopback MCP server without TOOL_ALLOW_PRIVATE_NETWORK: nothing reaches it, the run goes on with a warning', async () => {
      const guarded = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url })
      try {
        const carol = await guarded.make.user({ name: 'Carol Guarded' })
        const tool = (await guarded.as(carol).tools.create({ name: 'Local MCP', type: 'mcp', url: `${mcp.url}/mcp` } as never)).data
        const agent = (await guarded.as(carol).agents.create({ name: 'Guarded', tools: [{ tool_uuid: tool.uuid }] } as never)).data
        const res = await guarded.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: carol.token, body: { input: 'Weather?' } })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        expect(res.body.data.run.status).toBe('succeeded')
        expect(received.requests).toHaveLength(0)
        const read = await guarded.http('GET', `/api/v1/runs/${res.body.data.run.uuid}`, { token: carol.token })
        expect(read.body.data.run.warnings).toEqual([
          { code: 'mcp_tools_unavailable', message: expect.stringMatching(/"Local MCP" could not list its tools \(Refused: 127\.0\.0\.1:\d+ is \(or resolves to\) a private/) },
        ])
      } finally {
        await guarded.close()
      }
    })
  })
})
