/**
 * The MCP server at `/mcp` (docs/api/mcp.md), through the official SDK's own client and
 * Streamable HTTP transport against the running service: which tools a token's user gets,
 * that calling one stores an ordinary run or execution (checked over REST), and what is refused
 * with nothing run. The model is the real OpenAI provider client talking to
 * test/helpers/upstream.ts over loopback.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { makeAgent, readOnlyToken } from './helpers/agents.ts'
import { makePrompt } from './helpers/prompts.ts'
import { UUID } from './helpers/expect.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** A manual trigger feeding a `set` node that greets `$.name`. */
const GREETER = {
  nodes: [
    { id: 'start', type: 'manual_trigger', parameters: {} },
    { id: 'greet', type: 'set', parameters: { values: { greeting: "='Hello ' & $.name" } } },
  ],
  edges: [{ id: 'e0', source: 'start', target: 'greet' }],
}

describe('MCP server (POST /mcp)', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  let bob: TestUser
  /** Alice's application token, bound to her primary workspace. */
  let aliceApp: string
  const clients: Client[] = []

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '3000' })
    alice = await t.make.user({ name: 'Alice Mcp' })
    bob = await t.make.user({ name: 'Bob Other' })
    aliceApp = (await t.as(alice).accessTokens.create({ name: 'mcp client', workspace_uuid: alice.workspaceUuid })).data.access_token
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'mcp-server-test', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
    await client.connect(transport)
    clients.push(client)
    return client
  }
  const toolFor = (tools: Tool[], uuid: string) => tools.find((tool) => tool._meta?.uuid === uuid)
  const textOf = (result: CallToolResult | Record<string, unknown>) => ((result.content as { type: string; text: string }[])[0]?.text ?? '')
  const runsOf = async (user: TestUser) => Number((await t.sql('select count(*)::int as n from runs where user_id = ?', [user.id]))[0].n)
  const executionsOf = async (user: TestUser) => Number((await t.sql('select count(*)::int as n from workflow_executions where user_id = ?', [user.id]))[0].n)
  const makeWorkflow = async (user: TestUser, body: Record<string, unknown>) => {
    const res = await t.http('POST', '/api/v1/workflows', { token: user.token, body: { name: 'Greeter', ...GREETER, ...body } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string }
  }

  describe('tools/list', () => {
    it("lists the user's agents, prompts and active workflows in the token's workspace, with stable names and schemas; not another tenant's, not an inactive workflow", async () => {
      const agent = await makeAgent(t, alice, { name: 'Release Notes Writer', description: 'Writes release notes.' })
      const prompt = await makePrompt(t, alice, {
        name: 'Summarise',
        content: 'Summarise {{topic}} in a {{tone}} tone.',
        metadata: {
          input: [
            { key: 'topic', label: 'Topic', type: 'text', required: true },
            { key: 'tone', label: 'Tone', type: 'select', options: ['dry', 'warm'] },
            { key: 'words', label: 'Words', type: 'number' },
          ],
        },
      })
      const active = await makeWorkflow(alice, { name: 'Active Greeter', is_active: true })
      const inactive = await makeWorkflow(alice, { name: 'Idle Greeter', is_active: false })
      const bobsAgent = await makeAgent(t, bob, { name: 'Bob Secret', visibility: 'public' })
      const bobsPrompt = await makePrompt(t, bob, { name: 'Bob Prompt' })

      const client = await connect(aliceApp)
      expect(client.getServerVersion()?.name).toBe('agent-workspace')
      expect(client.getServerCapabilities()?.tools).toBeDefined()
      const { tools } = await client.listTools()
      for (const tool of tools) expect(tool.name).toMatch(TOOL_NAME)
      expect(new Set(tools.map((tool) => tool.name)).size).toBe(tools.length)

      const agentTool = toolFor(tools, agent.uuid)
      expect(agentTool).toMatchObject({
        name: `agent_release_notes_writer_${agent.uuid.replaceAll('-', '').slice(-8)}`,
        title: 'Release Notes Writer',
        _meta: { kind: 'agent', uuid: agent.uuid },
        inputSchema: { type: 'object', required: ['message'], additionalProperties: false },
      })
      expect(agentTool?.description).toContain('Writes release notes.')
      expect(agentTool?.description).toContain(agent.uuid)
      expect(Object.keys(agentTool?.inputSchema.properties ?? {})).toEqual(['message', 'thread_uuid', 'if_busy'])

      const promptTool = toolFor(tools, prompt.uuid)
      expect(promptTool?.name).toMatch(/^prompt_summarise_[0-9a-f]{8}$/)
      expect(promptTool?.inputSchema).toEqual({
        type: 'object',
        properties: {
          topic: { title: 'Topic', description: 'Topic', type: 'string', maxLength: 100_000 },
          tone: { title: 'Tone', description: 'Tone', type: 'string', enum: ['dry', 'warm'] },
          words: { title: 'Words', description: 'Words', type: 'number' },
        },
        required: ['topic'],
        additionalProperties: false,
      })

      expect(toolFor(tools, active.uuid)?.name).toMatch(/^workflow_active_greeter_[0-9a-f]{8}$/)
      expect(toolFor(tools, active.uuid)?.inputSchema).toMatchObject({ type: 'object', additionalProperties: true })
      expect(toolFor(tools, inactive.uuid)).toBeUndefined()
      expect(toolFor(tools, bobsAgent.uuid)).toBeUndefined()
      expect(toolFor(tools, bobsPrompt.uuid)).toBeUndefined()

      // The same names on the next listing (a new server per request).
      const again = await (await connect(aliceApp)).listTools()
      expect(again.tools.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name))
      // Bob sees his own, not Alice's.
      const bobs = (await (await connect(bob.token)).listTools()).tools
      expect(toolFor(bobs, bobsAgent.uuid)).toBeDefined()
      expect(toolFor(bobs, agent.uuid)).toBeUndefined()
    })

    it("lists the agents of the token's bound workspace only", async () => {
      const team = await t.make.workspace(alice, { name: 'Team Mcp' })
      const teamAgent = await t.http('POST', '/api/v1/agents', { token: alice.token, headers: { 'x-workspace-uuid': team.uuid }, body: { name: 'Team Agent' } })
      expect(teamAgent.status).toBe(201)
      const homeAgent = await makeAgent(t, alice, { name: 'Home Agent' })
      const teamToken = (await t.as(alice).accessTokens.create({ name: 'team', workspace_uuid: team.uuid })).data.access_token
      const teamTools = (await (await connect(teamToken)).listTools()).tools
      expect(toolFor(teamTools, teamAgent.body.data.uuid)).toBeDefined()
      expect(toolFor(teamTools, homeAgent.uuid)).toBeUndefined()
    })
  })

  describe('tools/call', () => {
    it('runs an agent tool: the answer text, a stored run and thread (read over REST), and thread_uuid continues the thread', async () => {
      const agent = await makeAgent(t, alice, { name: 'Echoer', instruction: 'Answer briefly.' })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, agent.uuid)!
      const result = await client.callTool({ name: tool.name, arguments: { message: 'Hello over MCP' } })
      expect(result.isError).toBeFalsy()
      expect(textOf(result)).toBe('Echo: Hello over MCP')
      const structured = result.structuredContent as { run_uuid: string; thread_uuid: string; status: string; output: string; usage: { total_tokens: number } }
      expect(structured).toMatchObject({ status: 'succeeded', output: 'Echo: Hello over MCP' })
      expect(structured.run_uuid).toMatch(UUID)
      expect(structured.thread_uuid).toMatch(UUID)
      expect(structured.usage.total_tokens).toBeGreaterThan(0)
      expect(upstream.requests.at(-1)?.body.messages[0].content).toContain('Answer briefly.')

      const stored = await t.http('GET', `/api/v1/runs/${structured.run_uuid}`, { token: alice.token })
      expect(stored.status).toBe(200)
      expect(stored.body.data.run).toMatchObject({ kind: 'agent', status: 'succeeded', agent_uuid: agent.uuid, thread_uuid: structured.thread_uuid, input: 'Hello over MCP' })
      expect(stored.body.data.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])

      const next = await client.callTool({ name: tool.name, arguments: { message: 'Second turn', thread_uuid: structured.thread_uuid } })
      expect((next.structuredContent as { thread_uuid: string }).thread_uuid).toBe(structured.thread_uuid)
      // The model got the earlier turn as history.
      const sent = upstream.requests.at(-1)?.body.messages.map((m: { content: string }) => m.content)
      expect(sent).toContain('Hello over MCP')
      const thread = await t.http('GET', `/api/v1/threads/${structured.thread_uuid}`, { token: alice.token })
      expect(thread.status).toBe(200)
    })

    it('answers a run that waits for approval as a result (not an error) whose structuredContent lists the pending approvals', async () => {
      const careful = await t.as(alice).tools.create({ name: 'Refund', url: 'https://payments.test/refund', requires_approval: true } as never)
      const agent = await makeAgent(t, alice, { name: 'Careful Agent', metadata: { large_language_model: 'local-test-model' }, tools: [{ tool_uuid: careful.data.uuid }] })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, agent.uuid)!
      const result = await client.callTool({ name: tool.name, arguments: { message: '/call refund {}' } })
      expect(result.isError).toBeFalsy()
      const structured = result.structuredContent as { run_uuid: string; status: string; approvals: { uuid: string; tool_name: string; status: string }[] }
      expect(structured).toMatchObject({ status: 'awaiting_approval', approvals: [{ tool_name: 'refund', status: 'pending' }] })
      expect(textOf(result)).toContain('waits for approval of: refund')
      const stored = await t.http('GET', `/api/v1/approvals/${structured.approvals[0].uuid}`, { token: alice.token })
      expect(stored.body.data.run_uuid).toBe(structured.run_uuid)
    })

    it('runs a prompt tool with its declared inputs: the rendered prompt reaches the model, and the run is stored', async () => {
      const prompt = await makePrompt(t, alice, {
        name: 'Haiku',
        content: 'A haiku about {{topic}}{{#tone}}, {{tone}}{{/tone}}.',
        metadata: { input: [{ key: 'topic', label: 'Topic', type: 'text', required: true }, { key: 'tone', label: 'Tone', type: 'select', options: ['dry', 'warm'] }] },
      })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, prompt.uuid)!
      const result = await client.callTool({ name: tool.name, arguments: { topic: 'autumn', tone: 'warm' } })
      expect(result.isError).toBeFalsy()
      expect(textOf(result)).toBe('Echo: A haiku about autumn, warm.')
      const structured = result.structuredContent as { run_uuid: string; thread_uuid: string | null }
      expect(structured.thread_uuid).toBeNull()
      const stored = await t.http('GET', `/api/v1/runs/${structured.run_uuid}`, { token: alice.token })
      expect(stored.body.data.run).toMatchObject({ kind: 'prompt', status: 'succeeded', prompt_uuid: prompt.uuid, input: { topic: 'autumn', tone: 'warm' } })
    })

    it('runs a workflow tool: a stored manual execution with its output', async () => {
      const workflow = await makeWorkflow(alice, { name: 'Greeting Flow', is_active: true })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, workflow.uuid)!
      const result = await client.callTool({ name: tool.name, arguments: { name: 'Ada' } })
      expect(result.isError).toBeFalsy()
      const structured = result.structuredContent as { execution_uuid: string; status: string; output: unknown; error: unknown }
      expect(structured).toMatchObject({ status: 'succeeded', output: { name: 'Ada', greeting: 'Hello Ada' }, error: null })
      expect(JSON.parse(textOf(result))).toEqual({ name: 'Ada', greeting: 'Hello Ada' })
      const stored = await t.http('GET', `/api/v1/workflow-executions/${structured.execution_uuid}`, { token: alice.token })
      expect(stored.status).toBe(200)
      expect(stored.body.data).toMatchObject({ mode: 'manual', status: 'succeeded', input: { name: 'Ada' }, workflow: { uuid: workflow.uuid } })
    })

    it('answers an error result naming the stored run when the model provider fails; the run is stored failed', async () => {
      const agent = await makeAgent(t, alice, { name: 'Unlucky' })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, agent.uuid)!
      upstream.enqueue({ kind: 'status', status: 500 })
      const result = await client.callTool({ name: tool.name, arguments: { message: 'Will it fail?' } })
      expect(result.isError).toBe(true)
      const runUuid = /Run ([0-9a-f-]{36}) failed/.exec(textOf(result))?.[1]
      expect(runUuid).toMatch(UUID)
      expect(textOf(result)).not.toContain('sk-upstream-test')
      const stored = await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })
      expect(stored.body.data.run).toMatchObject({ status: 'failed', agent_uuid: agent.uuid, error: { code: 'upstream_error' } })
    })

    it('keeps a tool callable by its listed name after the agent is renamed', async () => {
      const agent = await makeAgent(t, alice, { name: 'Old Name' })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, agent.uuid)!
      expect((await t.http('PUT', `/api/v1/agents/${agent.uuid}`, { token: alice.token, body: { name: 'New Name' } })).status).toBe(200)
      const result = await client.callTool({ name: tool.name, arguments: { message: 'Still there?' } })
      expect(textOf(result)).toBe('Echo: Still there?')
    })
  })

  describe('refusals (nothing is run)', () => {
    it('answers a JSON-RPC -32602 for a tool name the server never gives', async () => {
      const client = await connect(aliceApp)
      const before = await runsOf(alice)
      const error = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(McpError)
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams)
      expect((error as McpError).message).toContain('Unknown tool: no_such_tool')
      expect(await runsOf(alice)).toBe(before)
    })

    it('answers an error result for a tool whose agent was deleted after listing, or is another tenant\'s, and runs nothing', async () => {
      const agent = await makeAgent(t, alice, { name: 'Short Lived' })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, agent.uuid)!
      expect((await t.http('DELETE', `/api/v1/agents/${agent.uuid}`, { token: alice.token })).status).toBe(204)
      const before = await runsOf(alice)
      const requests = upstream.requests.length
      const result = await client.callTool({ name: tool.name, arguments: { message: 'Anyone?' } })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain('not available to you any more')
      expect(result.structuredContent).toBeUndefined()

      // Bob's agent, named the way Alice's tools are: the same answer, nothing of it revealed.
      const bobs = await makeAgent(t, bob, { name: 'Bob Private' })
      const guessed = await client.callTool({ name: `agent_bob_private_${bobs.uuid.replaceAll('-', '').slice(-8)}`, arguments: { message: 'Hi' } })
      expect(guessed.isError).toBe(true)
      expect(textOf(guessed)).not.toContain('Bob')
      expect(await runsOf(alice)).toBe(before)
      expect(await runsOf(bob)).toBe(0)
      expect(upstream.requests.length).toBe(requests)
    })

    it('answers an error result for a workflow deactivated after listing, and starts no execution', async () => {
      const workflow = await makeWorkflow(alice, { name: 'Soon Off', is_active: true })
      const client = await connect(aliceApp)
      const tool = toolFor((await client.listTools()).tools, workflow.uuid)!
      expect((await t.http('PUT', `/api/v1/workflows/${workflow.uuid}`, { token: alice.token, body: { is_active: false } })).status).toBe(200)
      const before = await executionsOf(alice)
      const result = await client.callTool({ name: tool.name, arguments: { name: 'Ada' } })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain('deactivated')
      expect(await executionsOf(alice)).toBe(before)
    })

    it('answers an error result naming the argument for bad arguments, and runs nothing', async () => {
      const agent = await makeAgent(t, alice, { name: 'Strict' })
      const other = await makeAgent(t, alice, { name: 'Other' })
      const prompt = await makePrompt(t, alice, {
        name: 'Toned',
        content: '{{topic}} {{tone}}',
        metadata: { input: [{ key: 'topic', label: 'Topic', type: 'text', required: true }, { key: 'tone', label: 'Tone', type: 'select', options: ['dry', 'warm'] }] },
      })
      const client = await connect(aliceApp)
      const tools = (await client.listTools()).tools
      const agentTool = toolFor(tools, agent.uuid)!.name
      const promptTool = toolFor(tools, prompt.uuid)!.name
      const otherThread = (await client.callTool({ name: toolFor(tools, other.uuid)!.name, arguments: { message: 'Mine' } })).structuredContent as { thread_uuid: string }
      const before = await runsOf(alice)
      const requests = upstream.requests.length

      const cases: [string, Record<string, unknown>, string][] = [
        [agentTool, {}, 'message'],
        [agentTool, { message: '' }, 'message'],
        [agentTool, { message: 42 }, 'message'],
        [agentTool, { message: 'Hi', thread_uuid: 'not-a-uuid' }, 'thread_uuid'],
        [agentTool, { message: 'Hi', colour: 'red' }, 'colour'],
        [agentTool, { message: 'Hi', thread_uuid: otherThread.thread_uuid }, 'thread_uuid'],
        [promptTool, {}, 'topic'],
        [promptTool, { topic: 'x', tone: 'loud' }, 'tone'],
        [promptTool, { topic: 'x', extra: 1 }, 'extra'],
      ]
      for (const [name, args, field] of cases) {
        const result = await client.callTool({ name, arguments: args })
        expect(result.isError, JSON.stringify(args)).toBe(true)
        expect(textOf(result), JSON.stringify(args)).toMatch(new RegExp(`^Invalid arguments: .*\\b${field}\\b`))
      }
      expect(await runsOf(alice)).toBe(before)
      expect(upstream.requests.length).toBe(requests)
    })

    it('lets a read-only token list the tools but not run one (running is a write, as over REST)', async () => {
      const agent = await makeAgent(t, alice, { name: 'Read Only Target' })
      const readOnly = await readOnlyToken(t, alice)
      const client = await connect(readOnly.token)
      const tool = toolFor((await client.listTools()).tools, agent.uuid)!
      expect(tool).toBeDefined()
      const before = await runsOf(alice)
      const result = await client.callTool({ name: tool.name, arguments: { message: 'Hi' } })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain('read-only')
      expect(await runsOf(alice)).toBe(before)
    })
  })

  describe('HTTP', () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } }
    const post = (headers: Record<string, string>, body: unknown = initialize) =>
      fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(body),
      })

    it('answers 401 with WWW-Authenticate without a token or with a bad one; the SDK client fails to connect', async () => {
      for (const headers of [{}, { authorization: 'Bearer wat_not-a-token' }] as Record<string, string>[]) {
        const res = await post(headers)
        expect(res.status).toBe(401)
        // The challenge names the protected resource metadata (RFC 9728), where OAuth clients start (test/mcp-oauth.test.ts).
        expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${t.config.appUrl}/.well-known/oauth-protected-resource/mcp"`)
        expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED' })
      }
      await expect(connect('wat_not-a-token')).rejects.toThrow(/401|Unauthorized/i)
    })

    it('answers initialize over plain HTTP (Server-Sent Events), without a session id', async () => {
      const res = await post({ authorization: `Bearer ${aliceApp}` })
      expect(res.status).toBe(200)
      expect(res.headers.get('mcp-session-id')).toBeNull()
      expect(res.headers.get('x-request-id')).toBeTruthy()
      const body = await res.text()
      const data = JSON.parse(body.split('\n').find((line) => line.startsWith('data: '))!.slice(6))
      expect(data).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'agent-workspace' } } })
      // The server cannot notify (no session outlives a request), so it must not promise list changes.
      expect(data.result.capabilities.tools).toEqual({ listChanged: false })
    })

    it('answers tools/list and tools/call as single requests (no session to open first), as the curl examples send them', async () => {
      const agent = await makeAgent(t, alice, { name: 'Curl Target' })
      const headers = { authorization: `Bearer ${aliceApp}`, 'mcp-protocol-version': '2025-06-18' }
      const dataOf = async (res: Response) => {
        expect(res.status).toBe(200)
        return JSON.parse((await res.text()).split('\n').find((line) => line.startsWith('data: '))!.slice(6))
      }
      const listed = await dataOf(await post(headers, { jsonrpc: '2.0', id: 2, method: 'tools/list' }))
      const tool = (listed.result.tools as Tool[]).find((entry) => entry._meta?.uuid === agent.uuid)!
      expect(tool).toBeDefined()
      const called = await dataOf(await post(headers, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: tool.name, arguments: { message: 'From curl' } } }))
      expect(called.result).toMatchObject({ content: [{ type: 'text', text: 'Echo: From curl' }], structuredContent: { status: 'succeeded' } })
    })

    it('answers 405 to GET and DELETE (stateless: no notification stream)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${t.url}/mcp`, { method, headers: { authorization: `Bearer ${aliceApp}`, accept: 'text/event-stream' } })
        expect(res.status).toBe(405)
        expect(res.headers.get('allow')).toBe('POST')
      }
    })

    it('answers 400 to a body that is not JSON, and 406 when the client accepts no event stream', async () => {
      const broken = await fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${aliceApp}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{"jsonrpc":',
      })
      expect(broken.status).toBe(400)
      const plain = await post({ authorization: `Bearer ${aliceApp}`, accept: 'application/json' })
      expect(plain.status).toBe(406)
    })
  })
})
