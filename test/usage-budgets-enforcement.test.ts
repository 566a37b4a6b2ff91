/**
 * Budget enforcement on every surface that calls a model (docs/api/usage-and-budgets.md,
 * "Enforcement"): a `block` budget that has reached a limit refuses agent, thread and prompt runs
 * (429 naming the budget, Retry-After to the end of its period, nothing stored), stops a run
 * between model steps, refuses generation (whose usage counts as one run when allowed), the
 * OpenAI-compatible API (the official `openai` client), MCP tool calls (the official MCP client),
 * command room firings, and queued or resumed runs when they are dispatched. Scopes (user, access
 * token, agent), `notify`, inactive budgets and earlier periods do not block what they do not
 * cover. The model is the real OpenAI provider client talking to test/helpers/upstream.ts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type HttpResult, type TestApp } from './helpers/app.ts'
import { startWeatherServer, type WeatherServer, weatherToolInput } from './helpers/tool-server.ts'
import { startUpstream, type ReplyUsage, type Upstream } from './helpers/upstream.ts'

/** Longest Retry-After of a month budget: 31 days. */
const MONTH_SECONDS = 31 * 86_400

const PERSONA = {
  role: 'Travel planner',
  goal_statement: 'Plan trips that fit the traveller’s budget and pace.',
  backstory: 'A former tour guide who has planned hundreds of city breaks.',
  guardrails: 'Never book or pay for anything; hand visa questions to a human.',
  base_instructions: 'Ask for dates and budget before suggesting anything.',
  conversation_starters: ['Plan a weekend in Lisbon', 'What should I pack for Iceland in March?', 'Find me a cheap city break'],
  greetings: 'Hello! Where would you like to go?',
  tone_of_voice: 'warm, concise',
  disc_personality: 'influential',
  openai_voice: 'coral',
}
/** A complete answer of `POST agents/generate`. */
const AGENT_ANSWER = {
  name: 'Trip Planner',
  description: 'Plans trips within a budget, day by day.',
  instruction: 'You are a travel planner. Ask for dates, budget and interests, then propose a day-by-day plan.',
  metadata: PERSONA,
  profile_photo_config: { emoji: '🧳', background_color: '#FFD166' },
  tools: [],
}
const NODES = [
  { id: 'start', type: 'manual_trigger', name: 'Start', parameters: {}, position: { x: 0, y: 0 } },
  { id: 'pause', type: 'wait', name: 'Pause', parameters: { seconds: 1 }, position: { x: 250, y: 0 } },
]
const EDGES = [{ id: 'e1', source: 'start', target: 'pause' }]
/** A valid answer of `POST workflows/generate`, and one it repairs (an unknown node type, an edge to nowhere). */
const GRAPH = { name: 'Pause after a run', description: 'Waits a second after each manual run.', nodes: NODES, edges: EDGES }
const BROKEN_GRAPH = {
  ...GRAPH,
  nodes: [...NODES, { id: 'ghost', type: 'no_such_node_type', parameters: {} }],
  edges: [...EDGES, { id: 'e2', source: 'pause', target: 'nowhere' }],
}

interface Budget {
  uuid: string
  name: string
  spent_tokens: number
  exceeded: boolean
}

describe('budget enforcement', () => {
  let t: TestApp
  let upstream: Upstream
  let weather: WeatherServer

  beforeAll(async () => {
    upstream = await startUpstream()
    weather = await startWeatherServer()
    t = await createTestApp({
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      LLM_TIMEOUT_MS: '5000',
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
    })
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

  let made = 0
  /** A new user, alone in their primary workspace, so workspace budgets see only this test's spend. */
  const freshUser = () => t.make.user({ name: `Budget User ${++made}` })
  const makeAgent = async (user: { token: string }, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const res = await t.http('POST', '/api/v1/agents', {
      token: user.token,
      headers,
      body: { name: `Agent ${++made}`, instruction: 'Answer briefly.', ...body },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string; name: string }
  }
  const makePrompt = async (user: { token: string }) => {
    const res = await t.http('POST', '/api/v1/prompts', {
      token: user.token,
      body: {
        name: `Prompt ${++made}`,
        content: 'Write about {{topic}}.',
        metadata: { input: [{ key: 'topic', label: 'Topic', type: 'text', required: true }] },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string }
  }
  const runAgent = (token: string, agentUuid: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token, headers, body })
  /** A succeeding run of `agentUuid` that used exactly `usage`; answers its result. */
  const spend = async (token: string, agentUuid: string, usage: ReplyUsage, headers: Record<string, string> = {}) => {
    upstream.enqueue({ kind: 'text', text: 'Spent.', usage })
    const res = await runAgent(token, agentUuid, { input: 'Spend some tokens' }, headers)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.usage).toMatchObject({ prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens })
    return res.body.data
  }
  const createBudget = async (
    user: { token: string },
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<Budget> => {
    const res = await t.http('POST', '/api/v1/budgets', {
      token: user.token,
      headers,
      body: { scope: 'workspace', period: 'month', ...body },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data
  }
  const readBudget = async (user: { token: string }, uuid: string, headers: Record<string, string> = {}): Promise<Budget> => {
    const res = await t.http('GET', `/api/v1/budgets/${uuid}`, { token: user.token, headers })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data
  }
  const updateBudget = async (user: { token: string }, uuid: string, body: Record<string, unknown>) => {
    const res = await t.http('PUT', `/api/v1/budgets/${uuid}`, { token: user.token, body })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data as Budget
  }
  /** Rows of the workspace: runs, messages, threads. */
  const stored = async (workspaceUuid: string) =>
    (
      await t.sql(
        `select (select count(*)::int from runs r where r.workspace_id = w.id) as runs,
           (select count(*)::int from messages m where m.workspace_id = w.id) as messages,
           (select count(*)::int from threads th where th.workspace_id = w.id) as threads
         from workspaces w where w.uuid = ?`,
        [workspaceUuid],
      )
    )[0]
  /** The refusal of a budget: 429 TOO_MANY_REQUESTS naming it, with Retry-After unless it is a `total` budget. */
  const expectRefused = (res: HttpResult, budget: Budget, period: 'month' | 'total' = 'month') => {
    expect(res.status, JSON.stringify(res.body)).toBe(429)
    expect(res.body.code).toBe('TOO_MANY_REQUESTS')
    expect(res.body.message).toContain(`Budget "${budget.name}" (${budget.uuid}) has reached its limit`)
    expect(res.body.message).toContain(period === 'total' ? 'in total' : 'this month')
    const retryAfter = res.headers.get('retry-after')
    if (period === 'total') {
      expect(retryAfter).toBeNull()
    } else {
      expect(Number(retryAfter)).toBeGreaterThan(0)
      expect(Number(retryAfter)).toBeLessThanOrEqual(MONTH_SECONDS)
    }
  }
  const getRun = async (user: { token: string }, uuid: string) => {
    const res = await t.http('GET', `/api/v1/runs/${uuid}`, { token: user.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data
  }
  /** Polls every 25 ms until `done`, for at most `ms`. */
  const poll = async <T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> => {
    const deadline = Date.now() + ms
    for (;;) {
      const value = await read()
      if (done(value)) return value
      if (Date.now() > deadline) throw new Error(`not reached within ${ms} ms: ${JSON.stringify(value).slice(0, 1000)}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  const FINAL = ['succeeded', 'failed', 'canceled']
  const ended = (user: { token: string }, uuid: string) =>
    poll(
      () => getRun(user, uuid),
      (data) => FINAL.includes(data.run.status),
    )
  const usageTotals = async (user: { token: string }) => {
    const res = await t.http('GET', '/api/v1/usage', { token: user.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.meta.totals as { runs: number; prompt_tokens: number; completion_tokens: number; total_tokens: number }
  }

  describe('refused before anything is stored', () => {
    it('agent, thread and prompt runs (sync, background and streamed) answer 429 naming the budget with Retry-After; nothing is stored, no model asked', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      const prompt = await makePrompt(user)
      const first = await spend(user.token, agent.uuid, { prompt_tokens: 600, completion_tokens: 400 })
      const threadUuid = first.run.thread_uuid as string
      const budget = await createBudget(user, { name: 'Cap', limit_tokens: 500 })
      expect(budget).toMatchObject({ spent_tokens: 1000, exceeded: true })
      const before = await stored(user.workspaceUuid)
      upstream.reset()

      const attempts: [string, string, Record<string, unknown>][] = [
        ['agent', `/api/v1/agents/${agent.uuid}/run`, { input: 'Again' }],
        ['agent background', `/api/v1/agents/${agent.uuid}/run`, { input: 'Again', background: true }],
        ['agent streamed', `/api/v1/agents/${agent.uuid}/run`, { input: 'Again', stream: true }],
        ['agent in its thread', `/api/v1/agents/${agent.uuid}/run`, { input: 'Again', thread_uuid: threadUuid }],
        ['thread', `/api/v1/threads/${threadUuid}/run`, { content: 'Again' }],
        ['thread background', `/api/v1/threads/${threadUuid}/run`, { content: 'Again', background: true }],
        ['prompt', `/api/v1/prompts/${prompt.uuid}/run`, { input: { topic: 'tides' } }],
        ['prompt background', `/api/v1/prompts/${prompt.uuid}/run`, { input: { topic: 'tides' }, background: true }],
      ]
      for (const [what, path, body] of attempts) {
        const res = await t.http('POST', path, { token: user.token, body })
        expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(429)
        expect(res.headers.get('content-type')).toMatch(/^application\/json/)
        expectRefused(res, budget)
        expect(res.body.message).toContain('1000 used')
      }
      expect(await stored(user.workspaceUuid)).toEqual(before)
      expect(upstream.requests).toHaveLength(0)
      // The same run is accepted once the limit is raised: the refusal was the budget's.
      await updateBudget(user, budget.uuid, { limit_tokens: 5000 })
      expect((await runAgent(user.token, agent.uuid, { input: 'Allowed now' })).status).toBe(200)
    })

    it('a `total` budget refuses without Retry-After; a budget on cost refuses too', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      const first = await spend(user.token, agent.uuid, { prompt_tokens: 300_000, completion_tokens: 200_000 })
      const total = await createBudget(user, { name: 'Lifetime', period: 'total', limit_tokens: 400 })
      expect(total.exceeded).toBe(true)
      const before = await stored(user.workspaceUuid)
      const refused = await runAgent(user.token, agent.uuid, { input: 'Once more' })
      expectRefused(refused, total, 'total')
      expect(await stored(user.workspaceUuid)).toEqual(before)
      expect(upstream.requests).toHaveLength(1)
      // A limit in dollars: the run's cost reaches it.
      await updateBudget(user, total.uuid, { is_active: false })
      const cost = Number(first.usage.cost)
      expect(cost).toBeGreaterThan(0)
      const dollars = await createBudget(user, { name: 'Dollars', limit_cost: cost })
      expect(dollars.exceeded).toBe(true)
      const byCost = await runAgent(user.token, agent.uuid, { input: 'Once more' })
      expectRefused(byCost, dollars)
      expect(byCost.body.message).toContain(`$${cost}`)
      expect(await stored(user.workspaceUuid)).toEqual(before)
    })
  })

  describe('other callers of runs', () => {
    it('the launch check comes before knowledge retrieval: a refused run of a knowledge agent embeds nothing', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user, { metadata: { knowledge: true } })
      await spend(user.token, agent.uuid, { prompt_tokens: 600, completion_tokens: 400 })
      // Where retrieval is hybrid, a run embeds its query (what the refusal must not do).
      const embeddings = () => upstream.requests.filter((request) => request.path === '/v1/embeddings').length
      expect(embeddings()).toBe(t.runtime.knowledge.mode === 'hybrid' ? 1 : 0)
      const budget = await createBudget(user, { name: 'Knowledge cap', limit_tokens: 500 })
      upstream.reset()
      expectRefused(await runAgent(user.token, agent.uuid, { input: 'What do the documents say?' }), budget)
      expect(upstream.requests).toHaveLength(0)
    })

    it('a workflow run_agent node fails with rate_limited and the budget’s message; no run is made', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      await spend(user.token, agent.uuid, { prompt_tokens: 600, completion_tokens: 400 })
      const budget = await createBudget(user, { name: 'Workflow cap', limit_tokens: 500 })
      const flow = await t.http('POST', '/api/v1/workflows', {
        token: user.token,
        body: {
          name: 'Ask the agent',
          nodes: [
            { id: 'start', type: 'manual_trigger', parameters: {} },
            { id: 'ask', type: 'run_agent', parameters: { agent_uuid: agent.uuid, message: 'Hello from a workflow' } },
          ],
          edges: [{ id: 'e0', source: 'start', target: 'ask' }],
        },
      })
      expect(flow.status, JSON.stringify(flow.body)).toBe(201)
      const before = await stored(user.workspaceUuid)
      upstream.reset()
      const execution = await t.http('POST', `/api/v1/workflows/${flow.body.data.uuid}/run`, { token: user.token, body: { input: {} } })
      expect(execution.status, JSON.stringify(execution.body)).toBe(200)
      const message = `Budget "Workflow cap" (${budget.uuid}) has reached its limit of 500 tokens (1000 used) this month`
      expect(execution.body.data).toMatchObject({ status: 'failed', error: { code: 'rate_limited', message, node_id: 'ask' } })
      expect(await stored(user.workspaceUuid)).toEqual(before)
      expect(upstream.requests).toHaveLength(0)
    })
  })

  describe('a run that crosses a limit while running', () => {
    it('finishes its step, then ends failed with budget_exceeded before asking the model again; its usage is that step’s; the sync answer is 429', async () => {
      const user = await freshUser()
      const tool = (await t.as(user).tools.create(weatherToolInput(weather) as never)).data
      const agent = await makeAgent(user, { tools: [{ tool_uuid: tool.uuid }] })
      await spend(user.token, agent.uuid, { prompt_tokens: 60, completion_tokens: 40 })
      // 100 spent: under the limit at launch; the first step's 100 tokens cross it.
      const budget = await createBudget(user, { name: 'Step cap', limit_tokens: 150 })
      expect(budget).toMatchObject({ spent_tokens: 100, exceeded: false })
      upstream.reset()
      upstream.enqueue(
        {
          kind: 'tool_calls',
          calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_budget' }],
          usage: { prompt_tokens: 70, completion_tokens: 30 },
        },
        { kind: 'text', text: 'Never asked for', usage: { prompt_tokens: 1, completion_tokens: 1 } },
      )
      const res = await runAgent(user.token, agent.uuid, { input: 'Weather in Oslo?' })
      // runs.service failIfUpstream: budget_exceeded is a 429 whose message names the run and the budget.
      expect(res.status, JSON.stringify(res.body)).toBe(429)
      expect(res.body.code).toBe('TOO_MANY_REQUESTS')
      const runUuid = /Run ([0-9a-f-]{36}) failed/.exec(res.body.message)?.[1] as string
      expect(runUuid).toBeDefined()
      expect(res.body.message).toContain(`Budget "Step cap" (${budget.uuid}) has reached its limit of 150 tokens (200 used) this month`)
      // docs/api/usage-and-budgets.md, "During a run": a caller waiting for the run gets no Retry-After.
      expect(res.headers.get('retry-after')).toBeNull()
      // The model was asked once; the tool of that step ran.
      expect(upstream.requests).toHaveLength(1)
      expect(weather.requests).toEqual(['/weather?city=Oslo'])
      const data = await getRun(user, runUuid)
      expect(data.run).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' } })
      expect(data.run.error.message).toContain(`Budget "Step cap" (${budget.uuid})`)
      expect(data.usage).toMatchObject({ prompt_tokens: 70, completion_tokens: 30, total_tokens: 100 })
      const [row] = await t.sql('select prompt_tokens, completion_tokens, total_tokens from runs where uuid = ?', [runUuid])
      expect(row).toEqual({ prompt_tokens: 70, completion_tokens: 30, total_tokens: 100 })
      // Its usage counts: the budget has spent both runs.
      expect(await readBudget(user, budget.uuid)).toMatchObject({ spent_tokens: 200, exceeded: true })
      const events = (
        await t.sql(`select type from run_events where run_id = (select id from runs where uuid = ?) order by seq`, [runUuid])
      ).map((e) => e.type)
      expect(events.at(-1)).toBe('run.failed')
      expect(events).toContain('tool.result')
    })

    it('in the background: 202, then failed with budget_exceeded after one model step', async () => {
      const user = await freshUser()
      const tool = (
        await t.as(user).tools.create({
          name: 'Weather',
          method: 'GET',
          url: `${weather.url}/weather?city={{city}}`,
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        } as never)
      ).data
      const agent = await makeAgent(user, { tools: [{ tool_uuid: tool.uuid }] })
      const budget = await createBudget(user, { name: 'Background cap', limit_tokens: 50 })
      upstream.enqueue(
        {
          kind: 'tool_calls',
          calls: [{ name: 'weather', arguments: '{"city":"Bergen"}', id: 'call_bg' }],
          usage: { prompt_tokens: 40, completion_tokens: 20 },
        },
        { kind: 'text', text: 'Never asked for' },
      )
      const res = await runAgent(user.token, agent.uuid, { input: 'Weather in Bergen?', background: true })
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      const data = await ended(user, res.body.data.run.uuid)
      expect(data.run).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' } })
      expect(data.run.error.message).toContain(budget.uuid)
      expect(data.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 })
      expect(upstream.requests).toHaveLength(1)
    })
  })

  describe('generation', () => {
    it('agents/generate, workflows/generate and threads/{x}/generate-name add their usage to GET usage as one run each while under, and are refused with 429 when over', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      const first = await spend(user.token, agent.uuid, { prompt_tokens: 10, completion_tokens: 5 })
      const threadUuid = first.run.thread_uuid as string
      const budget = await createBudget(user, { name: 'Generation cap', limit_tokens: 100_000 })
      let totals = await usageTotals(user)
      expect(totals).toMatchObject({ runs: 1, prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 })

      upstream.enqueue({ kind: 'text', text: JSON.stringify(AGENT_ANSWER), usage: { prompt_tokens: 300, completion_tokens: 200 } })
      const generatedAgent = await t.http('POST', '/api/v1/agents/generate', {
        token: user.token,
        body: { description: 'A travel planner' },
      })
      expect(generatedAgent.status, JSON.stringify(generatedAgent.body)).toBe(201)
      totals = await usageTotals(user)
      expect(totals).toMatchObject({ runs: 2, prompt_tokens: 310, completion_tokens: 205, total_tokens: 515 })

      // A repaired answer: two model calls, one run of their summed tokens.
      upstream.enqueue(
        { kind: 'text', text: JSON.stringify(BROKEN_GRAPH), usage: { prompt_tokens: 100, completion_tokens: 50 } },
        { kind: 'text', text: JSON.stringify(GRAPH), usage: { prompt_tokens: 120, completion_tokens: 60 } },
      )
      const generatedWorkflow = await t.http('POST', '/api/v1/workflows/generate', {
        token: user.token,
        body: { description: 'Wait after a run' },
      })
      expect(generatedWorkflow.status, JSON.stringify(generatedWorkflow.body)).toBe(201)
      expect(upstream.requests).toHaveLength(2 + 2)
      totals = await usageTotals(user)
      expect(totals).toMatchObject({ runs: 3, prompt_tokens: 530, completion_tokens: 315, total_tokens: 845 })

      upstream.enqueue({ kind: 'text', text: 'Spending talk', usage: { prompt_tokens: 40, completion_tokens: 3 } })
      const named = await t.http('POST', `/api/v1/threads/${threadUuid}/generate-name`, { token: user.token })
      expect(named.status, JSON.stringify(named.body)).toBe(200)
      expect(named.body.data.name).toBe('Spending talk')
      totals = await usageTotals(user)
      expect(totals).toMatchObject({ runs: 4, prompt_tokens: 570, completion_tokens: 318, total_tokens: 888 })
      // The rollup the budgets read is the same.
      expect((await readBudget(user, budget.uuid)).spent_tokens).toBe(888)

      // Over the limit: each is refused before the model is asked, and nothing is stored.
      const over = await updateBudget(user, budget.uuid, { limit_tokens: 888 })
      expect(over.exceeded).toBe(true)
      const requests = upstream.requests.length
      const counts = async () =>
        (
          await t.sql(
            `select (select count(*)::int from agents a where a.workspace_id = w.id) as agents, (select count(*)::int from workflows f where f.workspace_id = w.id) as workflows
             from workspaces w where w.uuid = ?`,
            [user.workspaceUuid],
          )
        )[0]
      const before = await counts()
      expectRefused(await t.http('POST', '/api/v1/agents/generate', { token: user.token, body: { description: 'A travel planner' } }), over)
      expectRefused(
        await t.http('POST', '/api/v1/workflows/generate', { token: user.token, body: { description: 'Wait after a run' } }),
        over,
      )
      expectRefused(await t.http('POST', `/api/v1/threads/${threadUuid}/generate-name`, { token: user.token }), over)
      expect(upstream.requests).toHaveLength(requests)
      expect(await counts()).toEqual(before)
      expect(await usageTotals(user)).toEqual(totals)
      const thread = await t.http('GET', `/api/v1/threads/${threadUuid}`, { token: user.token })
      expect(thread.body.data.name).toBe('Spending talk')
    })

    it('an agent budget refuses naming its thread, but not generating agents or workflows (no agent)', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      const first = await spend(user.token, agent.uuid, { prompt_tokens: 500, completion_tokens: 500 })
      const budget = await createBudget(user, { name: 'Agent cap', scope: 'agent', agent_uuid: agent.uuid, limit_tokens: 10 })
      expectRefused(await t.http('POST', `/api/v1/threads/${first.run.thread_uuid}/generate-name`, { token: user.token }), budget)
      upstream.enqueue({ kind: 'text', text: JSON.stringify(GRAPH), usage: { prompt_tokens: 5, completion_tokens: 5 } })
      expect((await t.http('POST', '/api/v1/workflows/generate', { token: user.token, body: { description: 'Wait' } })).status).toBe(201)
    })
  })

  describe('OpenAI-compatible API (official openai client)', () => {
    it('chat.completions.create, non-streamed and streamed, and responses.create: 429 insufficient_quota / budget_exceeded with Retry-After; nothing stored', async () => {
      const user = await freshUser()
      const key = (await t.as(user).accessTokens.create({ name: 'sdk' })).data.access_token
      const agent = await makeAgent(user)
      await spend(user.token, agent.uuid, { prompt_tokens: 700, completion_tokens: 300 })
      const budget = await createBudget(user, { name: 'SDK cap', limit_tokens: 999 })
      const client = new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey: key, maxRetries: 0 })
      const before = await stored(user.workspaceUuid)
      upstream.reset()
      const expectQuota = (error: unknown) => {
        expect(error).toBeInstanceOf(OpenAI.RateLimitError)
        const api = error as InstanceType<typeof OpenAI.RateLimitError>
        expect(api.status).toBe(429)
        expect(api.type).toBe('insufficient_quota')
        expect(api.code).toBe('budget_exceeded')
        expect(api.param).toBeNull()
        expect(api.message).toContain(`Budget "SDK cap" (${budget.uuid}) has reached its limit of 999 tokens (1000 used) this month`)
        const retryAfter = Number(api.headers?.get('retry-after'))
        expect(retryAfter).toBeGreaterThan(0)
        expect(retryAfter).toBeLessThanOrEqual(MONTH_SECONDS)
      }
      const messages = [{ role: 'user' as const, content: 'Hello?' }]
      expectQuota(await client.chat.completions.create({ model: agent.uuid, messages }).catch((error: unknown) => error))
      expectQuota(
        await client.chat.completions
          .create({ model: agent.uuid, messages, stream: true, stream_options: { include_usage: true } })
          .catch((error: unknown) => error),
      )
      expectQuota(await client.responses.create({ model: agent.uuid, input: 'Hello?' }).catch((error: unknown) => error))
      expect(await stored(user.workspaceUuid)).toEqual(before)
      expect(upstream.requests).toHaveLength(0)
      // Under the limit again, the same client gets an answer.
      await updateBudget(user, budget.uuid, { limit_tokens: 10_000 })
      const answer = await client.chat.completions.create({ model: agent.uuid, messages })
      expect(answer.choices[0].message.content).toBe('Echo: Hello?')
    })
  })

  describe('OpenAI-compatible API, a run stopped between steps', () => {
    it('streamed: the stream ends with an error event insufficient_quota / budget_exceeded; not streamed: 429 naming the run and the budget', async () => {
      const user = await freshUser()
      const key = (await t.as(user).accessTokens.create({ name: 'sdk' })).data.access_token
      const tool = (
        await t.as(user).tools.create({
          name: 'Weather',
          method: 'GET',
          url: `${weather.url}/weather?city={{city}}`,
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        } as never)
      ).data
      const agent = await makeAgent(user, { tools: [{ tool_uuid: tool.uuid }] })
      const budget = await createBudget(user, { name: 'Stream cap', limit_tokens: 50 })
      const client = new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey: key, maxRetries: 0 })
      const step = (id: string) => ({
        kind: 'tool_calls' as const,
        calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id }],
        usage: { prompt_tokens: 40, completion_tokens: 20 },
      })
      const messages = [{ role: 'user' as const, content: 'Weather in Oslo?' }]

      upstream.enqueue(step('call_stream'), { kind: 'text', text: 'Never asked for' })
      const chunks: unknown[] = []
      const streamed = await (async () => {
        const stream = await client.chat.completions.create({ model: agent.uuid, messages, stream: true })
        for await (const chunk of stream) chunks.push(chunk)
      })().catch((error: unknown) => error)
      expect(streamed).toBeInstanceOf(OpenAI.APIError)
      const streamError = streamed as InstanceType<typeof OpenAI.APIError>
      expect(streamError.type).toBe('insufficient_quota')
      expect(streamError.code).toBe('budget_exceeded')
      expect(streamError.message).toContain(`Budget "Stream cap" (${budget.uuid}) has reached its limit of 50 tokens (60 used) this month`)
      expect(chunks.length).toBeGreaterThan(0)
      expect(upstream.requests).toHaveLength(1)

      // 60 spent: raised to 110, the next run's first step (60) crosses it again.
      await updateBudget(user, budget.uuid, { limit_tokens: 110 })
      upstream.reset()
      upstream.enqueue(step('call_plain'), { kind: 'text', text: 'Never asked for' })
      const plain = await client.chat.completions.create({ model: agent.uuid, messages }).catch((error: unknown) => error)
      expect(plain).toBeInstanceOf(OpenAI.RateLimitError)
      const plainError = plain as InstanceType<typeof OpenAI.RateLimitError>
      expect(plainError.status).toBe(429)
      expect(plainError.type).toBe('insufficient_quota')
      expect(plainError.code).toBe('budget_exceeded')
      expect(plainError.headers?.get('x-should-retry')).toBe('false')
      expect(plainError.message).toMatch(/Run [0-9a-f-]{36} failed: /)
      expect(plainError.message).toContain(`Budget "Stream cap" (${budget.uuid}) has reached its limit of 110 tokens (120 used) this month`)
      expect(plainError.headers?.get('retry-after')).toBeNull()
      expect(upstream.requests).toHaveLength(1)
      const runs = await t.sql(
        `select status, error->>'code' as code, total_tokens from runs where workspace_id = (select id from workspaces where uuid = ?) order by id`,
        [user.workspaceUuid],
      )
      expect(runs).toEqual([
        { status: 'failed', code: 'budget_exceeded', total_tokens: 60 },
        { status: 'failed', code: 'budget_exceeded', total_tokens: 60 },
      ])
    })
  })

  describe('MCP tool calls (official MCP client)', () => {
    it('an agent or prompt tool answers an error result with the budget’s message; nothing is stored', async () => {
      const user = await freshUser()
      const key = (await t.as(user).accessTokens.create({ name: 'mcp', workspace_uuid: user.workspaceUuid })).data.access_token
      const agent = await makeAgent(user)
      const prompt = await makePrompt(user)
      await spend(user.token, agent.uuid, { prompt_tokens: 400, completion_tokens: 100 })
      const budget = await createBudget(user, { name: 'MCP cap', limit_tokens: 500 })
      const client = new Client({ name: 'budget-test', version: '1.0.0' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
      )
      try {
        const { tools } = await client.listTools()
        const toolFor = (uuid: string) => tools.find((tool: Tool) => tool._meta?.uuid === uuid) as Tool
        const textOf = (result: Record<string, unknown>) => (result.content as { type: string; text: string }[])[0]?.text ?? ''
        const before = await stored(user.workspaceUuid)
        upstream.reset()
        const viaAgent = (await client.callTool({
          name: toolFor(agent.uuid).name,
          arguments: { message: 'Hello over MCP' },
        })) as CallToolResult
        expect(viaAgent.isError).toBe(true)
        expect(textOf(viaAgent)).toBe(`Budget "MCP cap" (${budget.uuid}) has reached its limit of 500 tokens (500 used) this month`)
        expect(viaAgent.structuredContent).toBeUndefined()
        const viaPrompt = (await client.callTool({ name: toolFor(prompt.uuid).name, arguments: { topic: 'tides' } })) as CallToolResult
        expect(viaPrompt.isError).toBe(true)
        expect(textOf(viaPrompt)).toContain(`Budget "MCP cap" (${budget.uuid})`)
        expect(await stored(user.workspaceUuid)).toEqual(before)
        expect(upstream.requests).toHaveLength(0)
      } finally {
        await client.close()
      }
    })
  })

  describe('command room', () => {
    it('a task fired now whose agent is over budget: the firing fails with the budget’s message, no run is made, the task stays active', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      await spend(user.token, agent.uuid, { prompt_tokens: 800, completion_tokens: 200 })
      const budget = await createBudget(user, { name: 'Firing cap', scope: 'agent', agent_uuid: agent.uuid, limit_tokens: 1000 })
      expect(budget.exceeded).toBe(true)
      const TASKS = '/api/v1/command-room/tasks'
      const created = await t.http('POST', TASKS, {
        token: user.token,
        // run_at half an hour ago: the next due time is tomorrow, so only "run now" fires.
        body: {
          name: 'Daily digest',
          agent_uuid: agent.uuid,
          schedule: 'daily',
          run_at: new Date(Date.now() - 1_800_000).toISOString(),
          input: 'Digest',
          is_active: true,
        },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const task = created.body.data
      const before = await stored(user.workspaceUuid)
      upstream.reset()
      const fired = await t.http('POST', `${TASKS}/${task.uuid}/run`, { token: user.token })
      expect(fired.status, JSON.stringify(fired.body)).toBe(202)
      const firings = async () => (await t.http('GET', `${TASKS}/${task.uuid}/firings`, { token: user.token })).body.data
      const [firing] = await poll(firings, (list) => list.length > 0 && !['queued', 'running'].includes(list[0].status))
      expect(firing).toMatchObject({ uuid: fired.body.data.uuid, status: 'failed', thread_uuid: null, execution_uuid: null })
      expect(firing.error).toBe(`Budget "Firing cap" (${budget.uuid}) has reached its limit of 1000 tokens (1000 used) this month`)
      // No run: a linked uuid (the firing links before it runs) names none.
      if (firing.run_uuid !== null) expect(await t.sql('select 1 from runs where uuid = ?', [firing.run_uuid])).toEqual([])
      expect(await stored(user.workspaceUuid)).toEqual(before)
      expect(upstream.requests).toHaveLength(0)
      const after = (await t.http('GET', `${TASKS}/${task.uuid}`, { token: user.token })).body.data
      expect(after).toMatchObject({ is_active: true, last_status: 'failed', firings_count: 1 })
      expect(after.next_run_at).not.toBeNull()
    })
  })

  describe('scopes and kinds', () => {
    it('a user budget blocks that user only: another member of the workspace still runs', async () => {
      const owner = await freshUser()
      const member = await freshUser()
      await t.make.member(owner.workspaceUuid, owner, member)
      const inWorkspace = { 'x-workspace-uuid': owner.workspaceUuid }
      const ownersAgent = await makeAgent(owner)
      const membersAgent = await makeAgent(member, {}, inWorkspace)
      await spend(owner.token, ownersAgent.uuid, { prompt_tokens: 500, completion_tokens: 500 })
      const budget = await createBudget(owner, { name: 'Owner cap', scope: 'user', user_id: owner.id, limit_tokens: 1000 })
      expect(budget).toMatchObject({ spent_tokens: 1000, exceeded: true })
      expectRefused(await runAgent(owner.token, ownersAgent.uuid, { input: 'Me again' }), budget)
      const allowed = await runAgent(member.token, membersAgent.uuid, { input: 'My turn' }, inWorkspace)
      expect(allowed.status, JSON.stringify(allowed.body)).toBe(200)
      // Not even the member's agent is open to the owner: the budget follows the user.
      const shared = await makeAgent(member, { visibility: 'public' }, inWorkspace)
      expectRefused(await runAgent(owner.token, shared.uuid, { input: 'Borrowed' }), budget)
    })

    it('an access_token budget blocks only runs started with that token', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      const first = (await t.as(user).accessTokens.create({ name: 'ci', workspace_uuid: user.workspaceUuid })).data
      const second = (await t.as(user).accessTokens.create({ name: 'other', workspace_uuid: user.workspaceUuid })).data
      await spend(first.access_token, agent.uuid, { prompt_tokens: 300, completion_tokens: 300 })
      const budget = await createBudget(user, { name: 'CI cap', scope: 'access_token', access_token_uuid: first.uuid, limit_tokens: 600 })
      expect(budget).toMatchObject({ spent_tokens: 600, exceeded: true })
      const runs = async () =>
        Number(
          (
            await t.sql('select count(*)::int as n from runs where access_token_id = (select id from access_tokens where uuid = ?)', [
              first.uuid,
            ])
          )[0].n,
        )
      expect(await runs()).toBe(1)
      expectRefused(await runAgent(first.access_token, agent.uuid, { input: 'From CI' }), budget)
      expect(await runs()).toBe(1)
      expect((await runAgent(second.access_token, agent.uuid, { input: 'Other token' })).status).toBe(200)
      expect((await runAgent(user.token, agent.uuid, { input: 'Signed in' })).status).toBe(200)
      // Their spend is not the first token's.
      expect((await readBudget(user, budget.uuid)).spent_tokens).toBe(600)
    })

    it('an agent budget blocks only that agent', async () => {
      const user = await freshUser()
      const capped = await makeAgent(user)
      const other = await makeAgent(user)
      await spend(user.token, capped.uuid, { prompt_tokens: 200, completion_tokens: 100 })
      const budget = await createBudget(user, { name: 'One agent', scope: 'agent', agent_uuid: capped.uuid, limit_tokens: 300 })
      expectRefused(await runAgent(user.token, capped.uuid, { input: 'Capped' }), budget)
      expect((await runAgent(user.token, other.uuid, { input: 'Free' })).status).toBe(200)
      expect((await readBudget(user, budget.uuid)).spent_tokens).toBe(300)
    })

    it('a notify budget never blocks, even far over its limit', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      await spend(user.token, agent.uuid, { prompt_tokens: 900, completion_tokens: 100 })
      const budget = await createBudget(user, { name: 'Heads up', action: 'notify', limit_tokens: 10 })
      expect(budget.exceeded).toBe(true)
      for (let i = 0; i < 2; i++) expect((await runAgent(user.token, agent.uuid, { input: `Still fine ${i}` })).status).toBe(200)
      expect((await readBudget(user, budget.uuid)).exceeded).toBe(true)
      // The same budget as `block` refuses.
      const blocking = await updateBudget(user, budget.uuid, { action: 'block' })
      expectRefused(await runAgent(user.token, agent.uuid, { input: 'Blocked' }), blocking)
    })

    it('an inactive budget never blocks; activated, it does', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      await spend(user.token, agent.uuid, { prompt_tokens: 900, completion_tokens: 100 })
      const budget = await createBudget(user, { name: 'Dormant', is_active: false, limit_tokens: 10 })
      expect(budget).toMatchObject({ exceeded: true })
      expect((await runAgent(user.token, agent.uuid, { input: 'Inactive budget' })).status).toBe(200)
      const active = await updateBudget(user, budget.uuid, { is_active: true })
      expectRefused(await runAgent(user.token, agent.uuid, { input: 'Active budget' }), active)
    })

    it('a day budget does not count an earlier day’s usage; a total budget does (and has no Retry-After)', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      await t.sql(
        `insert into runs (uuid, kind, status, agent_id, user_id, workspace_id, model, input, prompt_tokens, completion_tokens, total_tokens, cost, events_count, created_at, updated_at)
         select gen_random_uuid(), 'agent', 'succeeded', a.id, a.user_id, a.workspace_id, 'gpt-4o-mini', '"long ago"', 600, 400, 1000, 0, 0, now() - interval '2 days', now() - interval '2 days'
         from agents a where a.uuid = ?`,
        [agent.uuid],
      )
      const daily = await createBudget(user, { name: 'Daily', period: 'day', limit_tokens: 500 })
      expect(daily).toMatchObject({ spent_tokens: 0, exceeded: false })
      const allowed = await runAgent(user.token, agent.uuid, { input: 'Today' })
      expect(allowed.status, JSON.stringify(allowed.body)).toBe(200)
      expect((await readBudget(user, daily.uuid)).spent_tokens).toBe(allowed.body.data.usage.total_tokens)
      const total = await createBudget(user, { name: 'Ever', period: 'total', limit_tokens: 1000 })
      expect(total.exceeded).toBe(true)
      expectRefused(await runAgent(user.token, agent.uuid, { input: 'Again today' }), total, 'total')
    })
  })

  describe('runs that go on later', () => {
    it('a queued run whose budget was reached by the time it is dispatched ends failed with budget_exceeded, without a model call', async () => {
      const user = await freshUser()
      const agent = await makeAgent(user)
      const thread = await t.http('POST', '/api/v1/threads', { token: user.token, body: { agent_uuid: agent.uuid } })
      expect(thread.status, JSON.stringify(thread.body)).toBe(201)
      const threadUuid = thread.body.data.uuid
      const budget = await createBudget(user, { name: 'Queue cap', limit_tokens: 500 })
      upstream.enqueue({
        kind: 'slow',
        delayMs: 800,
        then: { kind: 'text', text: 'Expensive answer', usage: { prompt_tokens: 400, completion_tokens: 200 } },
      })
      const first = await t.http('POST', `/api/v1/threads/${threadUuid}/run`, {
        token: user.token,
        body: { content: 'Think hard', background: true },
      })
      expect(first.status, JSON.stringify(first.body)).toBe(202)
      // Under the limit when it is sent: queued behind the first.
      const queued = await t.http('POST', `/api/v1/threads/${threadUuid}/run`, {
        token: user.token,
        body: { content: 'And then?', background: true, if_busy: 'enqueue' },
      })
      expect(queued.status, JSON.stringify(queued.body)).toBe(202)
      expect(queued.body.data.run.status).toBe('queued')
      const done = await ended(user, first.body.data.run.uuid)
      expect(done.run.status).toBe('succeeded')
      expect(done.usage.total_tokens).toBe(600)
      const failed = await ended(user, queued.body.data.run.uuid)
      expect(failed.run).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' } })
      expect(failed.run.error.message).toBe(`Budget "Queue cap" (${budget.uuid}) has reached its limit of 500 tokens (600 used) this month`)
      expect(failed.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 })
      expect(upstream.requests).toHaveLength(1)
      expect(await readBudget(user, budget.uuid)).toMatchObject({ spent_tokens: 600, exceeded: true })
    })

    // KNOWN BUG (reported): src/runs/run-driver.ts start() builds the model call (agentCall, which
    // embeds the knowledge query) before executeRun's checkBudget, so a queued run of a knowledge
    // agent makes an embedding call although its budget is reached. `.fails` until that is fixed;
    // without pgvector (full-text retrieval) nothing is embedded, so there is nothing to check.
    it('a queued run of a knowledge agent refused at dispatch embeds nothing either', async (ctx) => {
      if (t.runtime.knowledge.mode !== 'hybrid') ctx.skip()
      const user = await freshUser()
      const agent = await makeAgent(user, { metadata: { knowledge: true } })
      const thread = await t.http('POST', '/api/v1/threads', { token: user.token, body: { agent_uuid: agent.uuid } })
      const threadUuid = thread.body.data.uuid
      await createBudget(user, { name: 'Knowledge queue cap', limit_tokens: 500 })
      upstream.enqueue({
        kind: 'slow',
        delayMs: 400,
        then: { kind: 'text', text: 'Expensive answer', usage: { prompt_tokens: 400, completion_tokens: 200 } },
      })
      const first = await t.http('POST', `/api/v1/threads/${threadUuid}/run`, {
        token: user.token,
        body: { content: 'Think hard', background: true },
      })
      const queued = await t.http('POST', `/api/v1/threads/${threadUuid}/run`, {
        token: user.token,
        body: { content: 'And then?', background: true },
      })
      expect(queued.body.data.run.status).toBe('queued')
      // The first run embedded its query at launch; the queued one has embedded nothing yet.
      const embeddingsBefore = upstream.requests.filter((request) => request.path === '/v1/embeddings').length
      expect(embeddingsBefore).toBe(1)
      await ended(user, first.body.data.run.uuid)
      const failed = await ended(user, queued.body.data.run.uuid)
      expect(failed.run.error.code).toBe('budget_exceeded')
      expect(upstream.requests.filter((request) => request.path === '/v1/embeddings')).toHaveLength(embeddingsBefore)
    })

    it('a run resumed after an approval, and the run queued behind it, end failed with budget_exceeded once a budget was reached meanwhile', async () => {
      const user = await freshUser()
      const tool = (
        await t.as(user).tools.create({
          name: 'Weather',
          method: 'GET',
          url: `${weather.url}/weather?city={{city}}`,
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          requires_approval: true,
        } as never)
      ).data
      const agent = await makeAgent(user, { tools: [{ tool_uuid: tool.uuid }] })
      upstream.enqueue({
        kind: 'tool_calls',
        calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_wait' }],
        usage: { prompt_tokens: 300, completion_tokens: 200 },
      })
      const waiting = await runAgent(user.token, agent.uuid, { input: 'Weather in Oslo?' })
      expect(waiting.status, JSON.stringify(waiting.body)).toBe(200)
      expect(waiting.body.data.run.status).toBe('awaiting_approval')
      const threadUuid = waiting.body.data.run.thread_uuid
      const queued = await t.http('POST', `/api/v1/threads/${threadUuid}/run`, {
        token: user.token,
        body: { content: 'And tomorrow?', background: true },
      })
      expect(queued.status, JSON.stringify(queued.body)).toBe(202)
      expect(queued.body.data.run.status).toBe('queued')
      const budget = await createBudget(user, { name: 'Resume cap', limit_tokens: 500 })
      expect(budget).toMatchObject({ spent_tokens: 500, exceeded: true })
      const approved = await t.http('POST', `/api/v1/approvals/${waiting.body.data.approvals[0].uuid}/approve`, {
        token: user.token,
        body: {},
      })
      expect(approved.status, JSON.stringify(approved.body)).toBe(200)
      const resumed = await ended(user, waiting.body.data.run.uuid)
      expect(resumed.run).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' } })
      expect(resumed.run.error.message).toContain(budget.uuid)
      expect(resumed.usage.total_tokens).toBe(500)
      const next = await ended(user, queued.body.data.run.uuid)
      expect(next.run).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' } })
      // Only the first step asked the model; the approved call did not run either.
      expect(upstream.requests).toHaveLength(1)
      expect(weather.requests).toEqual([])
    })
  })
})
