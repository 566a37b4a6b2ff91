/**
 * `POST /api/v1/agents/generate` (docs/api/generate-and-leaderboard.md, "Generating an agent"):
 * a workspace's model designs a complete agent from a description through structured output;
 * the answer is checked like a create request, repaired once when it fails, and stored as an
 * ordinary agent of the caller, bound only to tools the caller can use. The model is the real
 * OpenAI provider client talking to test/helpers/upstream.ts over loopback.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { AGENT_KEYS, expectNamed, member, readOnlyToken, type Member } from './helpers/agents.ts'
import { expectErrorBody, UUID } from './helpers/expect.ts'
import { insertAccount, insertProvider, insertTool, type RowRef } from './helpers/rows.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

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
const PHOTO = { emoji: '🧳', background_color: '#FFD166' }
/** A complete answer naming `tools` (uuids). */
const agentAnswer = (tools: string[] = []) => ({
  name: 'Trip Planner',
  description: 'Plans trips within a budget, day by day.',
  instruction: 'You are a travel planner. Ask for dates, budget and interests, then propose a day-by-day plan.',
  metadata: PERSONA,
  profile_photo_config: PHOTO,
  tools: tools.map((tool_uuid) => ({ tool_uuid })),
})
/** An answer with a persona the create input refuses: an unknown personality, no greeting, no starters. */
const BROKEN = {
  ...agentAnswer(),
  metadata: { ...PERSONA, disc_personality: 'chaotic', greetings: undefined, conversation_starters: [] },
}

describe('agents.generate (POST /api/v1/agents/generate)', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: Member
  let bob: TestUser
  /** Alice's tools: one without a provider, one whose provider needs an account she has, one whose provider needs an account she lacks. */
  let plain: RowRef
  let keyed: RowRef
  let keyless: RowRef
  let account: RowRef
  /** A private tool of another tenant. */
  let foreign: RowRef
  const PATH = '/api/v1/agents/generate'
  const generate = (user: { token: string } | null, body: unknown, headers: Record<string, string> = {}) =>
    t.http('POST', PATH, { token: user?.token, body, headers })
  const text = (value: string) => ({ kind: 'text' as const, text: value })
  const json = (value: unknown) => text(JSON.stringify(value))
  const agentCount = async () => Number((await t.sql('select count(*)::int as n from agents'))[0].n)
  /** The messages of the n-th request the upstream saw. */
  const messagesOf = (index: number) => upstream.requests[index].body.messages as { role: string; content: string }[]

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '1500' })
    alice = await member(t, await t.make.user({ name: 'Alice Builder' }))
    bob = await t.make.user({ name: 'Bob Outsider' })
    const own = { userId: alice.id, workspaceId: alice.wsId }
    plain = await insertTool(t, { ...own, name: 'Public holidays' })
    const provider = await insertProvider(t, { ...own, name: 'Flights API' })
    keyed = await insertTool(t, { ...own, name: 'Flight search', providerId: provider.id })
    account = await insertAccount(t, { ...own, providerId: provider.id })
    const locked = await insertProvider(t, { ...own, name: 'Hotels API' })
    keyless = await insertTool(t, { ...own, name: 'Hotel search', providerId: locked.id })
    const bobWs = Number((await t.sql('select id::float8 as id from workspaces where uuid = ?', [bob.workspaceUuid]))[0].id)
    foreign = await insertTool(t, { userId: bob.id, workspaceId: bobWs, name: 'Bob secret tool' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  it('stores a complete agent of the caller: 201 {data: Agent}, bound only to tools the caller can use', async () => {
    upstream.enqueue(json(agentAnswer([plain.uuid, foreign.uuid, keyed.uuid, plain.uuid, keyless.uuid])))
    const res = await generate(alice, { description: 'An assistant that plans trips on a budget.' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(Object.keys(res.body)).toEqual(['data'])
    const agent = res.body.data
    expect(Object.keys(agent).sort()).toEqual(AGENT_KEYS)
    expect(agent).toMatchObject({
      name: 'Trip Planner',
      description: 'Plans trips within a budget, day by day.',
      instruction: expect.stringContaining('You are a travel planner.'),
      metadata: PERSONA,
      profile_photo_config: { ...PHOTO, preference: 'emoji' },
      visibility: 'private',
      is_owner: true,
      is_template: false,
      user: expect.objectContaining({ id: alice.id }),
      workspace: expect.objectContaining({ uuid: alice.workspaceUuid }),
    })
    // Every persona field, and nothing the model was not asked for (the agent runs on the default model).
    expect(Object.keys(agent.metadata).sort()).toEqual(Object.keys(PERSONA).sort())
    expect(agent.uuid).toMatch(UUID)
    // The other tenant's tool and the one without a usable account are dropped, the repeat bound once.
    expect(agent.tools.map((tool: { uuid: string }) => tool.uuid)).toEqual([plain.uuid, keyed.uuid])
    expect(agent.tools[0].pivot_account).toBeNull()
    expect(agent.tools[1].pivot_account).toMatchObject({ uuid: account.uuid })
    expect(agent.tools_count).toBe(2)
    const read = await t.http('GET', `/api/v1/agents/${agent.uuid}`, { token: alice.token })
    expect(read.body.data).toEqual({ ...agent, usage_frequency: read.body.data.usage_frequency })

    // One model call, through structured output with the JSON Schema of the agent.
    expect(upstream.requests).toHaveLength(1)
    const body = upstream.requests[0].body
    expect(body.model).toBe('gpt-4o-mini')
    expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'agent', strict: false } })
    const schema = body.response_format.json_schema.schema
    expect(schema.required).toEqual(
      expect.arrayContaining(['name', 'description', 'instruction', 'metadata', 'profile_photo_config', 'tools']),
    )
    expect(schema.properties.metadata.required).toEqual(expect.arrayContaining(Object.keys(PERSONA)))
    expect(schema.properties.metadata.properties.disc_personality.enum).toEqual(['dominant', 'influential', 'steady', 'conscientious'])
    // Only the tools the caller can bind as they are can be named.
    expect(schema.properties.tools.items.properties.tool_uuid.enum.sort()).toEqual([plain.uuid, keyed.uuid].sort())
    const [system, user] = messagesOf(0)
    expect(system.role).toBe('system')
    for (const name of ['Public holidays', 'Flight search']) expect(system.content).toContain(name)
    for (const name of ['Hotel search', 'Bob secret tool']) expect(system.content).not.toContain(name)
    expect(user).toEqual({ role: 'user', content: 'An assistant that plans trips on a budget.' })
  })

  it('asks the named model and creates in the workspace of workspace_uuid, where no tools are offered', async () => {
    const team = await t.make.workspace(alice, { name: 'Travel desk' })
    upstream.enqueue(json(agentAnswer([plain.uuid])))
    const res = await generate(alice, { description: 'Plans trips', large_language_model: 'gpt-4o', workspace_uuid: team.uuid })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.data).toMatchObject({ workspace: expect.objectContaining({ uuid: team.uuid }), tools: [] })
    expect(upstream.requests[0].body.model).toBe('gpt-4o')
    expect(messagesOf(0)[0].content).toContain('There are no tools to choose from')
  })

  it('accepts a description of exactly 2,000 characters', async () => {
    upstream.enqueue(json(agentAnswer()))
    const res = await generate(alice, { description: 'x'.repeat(2_000) })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
  })

  it('asks once more with the problems listed when the answer is invalid, and stores the repaired agent', async () => {
    upstream.enqueue(json(BROKEN), json(agentAnswer()))
    const res = await generate(alice, { description: 'Plans trips' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.data.metadata).toEqual(PERSONA)
    expect(upstream.requests).toHaveLength(2)
    const repair = messagesOf(1)
    expect(repair.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user'])
    expect(JSON.parse(repair[2].content)).toEqual(JSON.parse(JSON.stringify(BROKEN)))
    for (const path of ['metadata.disc_personality', 'metadata.greetings', 'metadata.conversation_starters'])
      expect(repair[3].content).toContain(path)
  })

  it('treats an answer that is not JSON as invalid, and tolerates one fenced in prose', async () => {
    upstream.enqueue(
      text('Sure, here is a lovely travel agent for you!'),
      text(`Here it is:\n\`\`\`json\n${JSON.stringify(agentAnswer())}\n\`\`\``),
    )
    const res = await generate(alice, { description: 'Plans trips' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(messagesOf(1).at(-1)?.content).toContain('not a JSON object')
  })

  it('answers 502 naming the problems, and stores nothing, when the repaired answer is invalid too', async () => {
    const before = await agentCount()
    upstream.enqueue(json(BROKEN), json({ ...agentAnswer(), profile_photo_config: { emoji: '🧳', background_color: 'sunny yellow' } }))
    const res = await generate(alice, { description: 'Plans trips' })
    expectErrorBody(res, 502, 'BAD_GATEWAY')
    expect(res.body.message).toContain('profile_photo_config.background_color')
    expect(upstream.requests).toHaveLength(2)
    expect(await agentCount()).toBe(before)
  })

  it('answers 502 when the upstream fails (first call or repair) and 504 when it hangs; nothing is stored', async () => {
    const before = await agentCount()
    upstream.enqueue({ kind: 'status', status: 500 })
    expectErrorBody(await generate(alice, { description: 'Plans trips' }), 502, 'BAD_GATEWAY')
    upstream.enqueue(json(BROKEN), { kind: 'status', status: 500 })
    expectErrorBody(await generate(alice, { description: 'Plans trips' }), 502, 'BAD_GATEWAY')
    upstream.enqueue({ kind: 'malformed' })
    expectErrorBody(await generate(alice, { description: 'Plans trips' }), 502, 'BAD_GATEWAY')
    upstream.enqueue({ kind: 'slow', delayMs: 4_000, then: json(agentAnswer()) })
    const started = Date.now()
    expectErrorBody(await generate(alice, { description: 'Plans trips' }), 504, 'GATEWAY_TIMEOUT')
    // LLM_TIMEOUT_MS is 1,500: the answer comes when it runs out, not when the upstream would have answered.
    expect(Date.now() - started).toBeLessThan(3_500)
    expect(await agentCount()).toBe(before)
  })

  it('refuses the local test model and an unknown model: 400 naming large_language_model, without asking', async () => {
    const before = await agentCount()
    expectNamed(await generate(alice, { description: 'Plans trips', large_language_model: 'local-test-model' }), 'large_language_model')
    expectNamed(await generate(alice, { description: 'Plans trips', large_language_model: 'no-such-model' }), 'large_language_model')
    expect(upstream.requests).toHaveLength(0)
    expect(await agentCount()).toBe(before)
  })

  it('validates the body before asking the model: 400 naming the field', async () => {
    const before = await agentCount()
    const cases: [unknown, string][] = [
      [{}, 'description'],
      [{ description: '' }, 'description'],
      [{ description: '   ' }, 'description'],
      [{ description: 'x'.repeat(2_001) }, 'description'],
      [{ description: 42 }, 'description'],
      [{ description: null }, 'description'],
      [{ description: 'ok', workspace_uuid: 'nope' }, 'workspace_uuid'],
      [{ description: 'ok', large_language_model: 'not a slug!' }, 'large_language_model'],
      [{ description: 'ok', large_language_model: '' }, 'large_language_model'],
      [{ description: 'ok', large_language_model: 7 }, 'large_language_model'],
      [{ description: 'ok', name: 'Trip Planner' }, 'name'],
    ]
    for (const [body, field] of cases) expectNamed(await generate(alice, body), field)
    expect(upstream.requests).toHaveLength(0)
    expect(await agentCount()).toBe(before)
  })

  it('answers 401 without a token and 403 to a read-only token, without asking the model', async () => {
    expectErrorBody(await generate(null, { description: 'Plans trips' }), 401, 'UNAUTHORIZED')
    expectErrorBody(await generate(await readOnlyToken(t, alice), { description: 'Plans trips' }), 403, 'FORBIDDEN')
    expect(upstream.requests).toHaveLength(0)
  })

  it("answers 404 for another tenant's workspace_uuid, revealing nothing, without asking the model", async () => {
    const before = await agentCount()
    const res = await generate(alice, { description: 'Plans trips', workspace_uuid: bob.workspaceUuid })
    expectErrorBody(res, 404, 'NOT_FOUND')
    expect(JSON.stringify(res.body)).not.toContain('Bob')
    expect(upstream.requests).toHaveLength(0)
    expect(await agentCount()).toBe(before)
  })

  it('works through the tRPC caller', async () => {
    upstream.enqueue(json(agentAnswer([keyed.uuid])))
    const res = await t.as(alice).agents.generate({ description: 'Plans trips' })
    expect(res.data).toMatchObject({ name: 'Trip Planner', is_owner: true, metadata: PERSONA })
    expect(res.data.tools?.map((tool) => tool.uuid)).toEqual([keyed.uuid])
  })
})
