/**
 * `POST /api/v1/workflows/generate` (docs/api/resources.md): a workspace's model
 * designs a graph from a description; the answer is checked like a saved graph, repaired once
 * when it fails, and stored as an ordinary workflow of the caller. The model is the real OpenAI
 * provider client talking to test/helpers/upstream.ts over loopback.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { expectNamed, readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, UUID } from './helpers/expect.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { WORKFLOW_KEYS } from './helpers/workflows.ts'

const NODES = [
  { id: 'start', type: 'manual_trigger', name: 'Start', parameters: {}, position: { x: 0, y: 0 } },
  { id: 'pause', type: 'wait', name: 'Pause', parameters: { seconds: 1 }, position: { x: 250, y: 0 } },
]
const EDGES = [{ id: 'e1', source: 'start', target: 'pause' }]
const GRAPH = { name: 'Pause after a run', description: 'Waits a second after each manual run.', nodes: NODES, edges: EDGES }
/** The same graph with an edge to a node that does not exist and a node of an unknown type. */
const BROKEN = {
  ...GRAPH,
  nodes: [...NODES, { id: 'ghost', type: 'no_such_node_type', parameters: {} }],
  edges: [...EDGES, { id: 'e2', source: 'pause', target: 'nowhere' }],
}

describe('workflows.generate (POST /api/v1/workflows/generate)', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  const PATH = '/api/v1/workflows/generate'
  const generate = (user: { token: string } | null, body: unknown, headers: Record<string, string> = {}) =>
    t.http('POST', PATH, { token: user?.token, body, headers })
  const text = (value: string) => ({ kind: 'text' as const, text: value })
  const json = (value: unknown) => text(JSON.stringify(value))
  const workflowCount = async () => Number((await t.sql('select count(*)::int as n from workflows'))[0].n)
  /** The messages of the n-th request the upstream saw. */
  const messagesOf = (index: number) => upstream.requests[index].body.messages as { role: string; content: string }[]

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '1500' })
    alice = await t.make.user({ name: 'Alice Designer' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  it('stores the graph the model gave as a workflow of the caller: 201 {data: Workflow}', async () => {
    upstream.enqueue(text(`Here is your workflow:\n\`\`\`json\n${JSON.stringify(GRAPH, null, 2)}\n\`\`\`\nEnjoy.`))
    const res = await generate(alice, { description: 'When I run it by hand, wait one second.' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(Object.keys(res.body)).toEqual(['data'])
    const workflow = res.body.data
    expect(Object.keys(workflow).sort()).toEqual(WORKFLOW_KEYS)
    expect(workflow).toMatchObject({
      name: 'Pause after a run',
      description: 'Waits a second after each manual run.',
      nodes: NODES,
      edges: EDGES,
      visibility: 'private',
      is_active: false,
      is_owner: true,
      trigger_count: 0,
      user: expect.objectContaining({ id: alice.id }),
      workspace: expect.objectContaining({ uuid: alice.workspaceUuid }),
    })
    expect(workflow.uuid).toMatch(UUID)
    const read = await t.http('GET', `/api/v1/workflows/${workflow.uuid}`, { token: alice.token })
    expect(read.body.data).toMatchObject({ nodes: NODES, edges: EDGES })
    // One model call: the system prompt lists the node types with their parameter schemas.
    expect(upstream.requests).toHaveLength(1)
    const [system, user] = messagesOf(0)
    expect(system.role).toBe('system')
    for (const type of ['manual_trigger', 'webhook_trigger', 'schedule_trigger', 'wait']) expect(system.content).toContain(`"${type}"`)
    expect(system.content).toContain('"properties"')
    expect(user).toEqual({ role: 'user', content: 'When I run it by hand, wait one second.' })
    expect(upstream.requests[0].body.model).toBe('gpt-4o-mini')
    // Structured output (src/models/structured-generate.ts), the mechanism agent generation uses too.
    expect(upstream.requests[0].body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'workflow', strict: false },
    })
    expect(upstream.requests[0].body.response_format.json_schema.schema.required).toEqual(['name', 'description', 'nodes', 'edges'])
  })

  it('keeps a given name, asks the named model, and creates in the workspace of workspace_uuid', async () => {
    const team = await t.make.workspace(alice, { name: 'Design team' })
    upstream.enqueue(json(GRAPH))
    const res = await generate(alice, { description: 'Wait after a run', name: 'My pause', model: 'gpt-4o', workspace_uuid: team.uuid })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.data).toMatchObject({ name: 'My pause', workspace: expect.objectContaining({ uuid: team.uuid }) })
    expect(upstream.requests[0].body.model).toBe('gpt-4o')
    expect(messagesOf(0).at(-1)?.content).toContain('My pause')
  })

  it('asks once more with the problems listed when the graph is invalid, and stores the repaired one', async () => {
    upstream.enqueue(json(BROKEN), json(GRAPH))
    const res = await generate(alice, { description: 'Wait after a run' })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body.data).toMatchObject({ nodes: NODES, edges: EDGES })
    expect(upstream.requests).toHaveLength(2)
    const repair = messagesOf(1)
    expect(repair.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user'])
    expect(repair[2].content).toBe(JSON.stringify(BROKEN))
    expect(repair[3].content).toContain('edges.1.target')
    expect(repair[3].content).toContain('nodes.2')
  })

  it('answers 400 naming description, the problems in the message, and stores nothing when the repair fails too', async () => {
    const before = await workflowCount()
    upstream.enqueue(json(BROKEN), json(BROKEN))
    const res = await generate(alice, { description: 'Wait after a run' })
    expectNamed(res, 'description')
    const issue = res.body.issues.find((i: { path: string[] }) => i.path.join('.') === 'description')
    expect(issue.message).toContain('edges.1.target')
    expect(upstream.requests).toHaveLength(2)
    expect(await workflowCount()).toBe(before)
  })

  it('treats an answer that is not JSON (or not a graph) as invalid: repaired, else 400', async () => {
    const before = await workflowCount()
    upstream.enqueue(text('I would rather not.'), json(GRAPH))
    const repaired = await generate(alice, { description: 'Wait after a run' })
    expect(repaired.status, JSON.stringify(repaired.body)).toBe(201)
    expect(messagesOf(1).at(-1)?.content).toContain('not a JSON object')
    upstream.reset()
    upstream.enqueue(text('Sorry, no.'), json({ name: 'x', nodes: 'none' }))
    const refused = await generate(alice, { description: 'Wait after a run' })
    expectNamed(refused, 'description')
    expect(upstream.requests).toHaveLength(2)
    expect(await workflowCount()).toBe(before + 1)
  })

  it('answers 502 when the upstream fails (first call or repair) and 504 when it is too slow; nothing is stored', async () => {
    const before = await workflowCount()
    upstream.enqueue({ kind: 'status', status: 500 })
    expectErrorBody(await generate(alice, { description: 'Wait after a run' }), 502, 'BAD_GATEWAY')
    upstream.enqueue(json(BROKEN), { kind: 'status', status: 500 })
    expectErrorBody(await generate(alice, { description: 'Wait after a run' }), 502, 'BAD_GATEWAY')
    upstream.enqueue({ kind: 'malformed' })
    expectErrorBody(await generate(alice, { description: 'Wait after a run' }), 502, 'BAD_GATEWAY')
    upstream.enqueue({ kind: 'slow', delayMs: 4_000, then: json(GRAPH) })
    expectErrorBody(await generate(alice, { description: 'Wait after a run' }), 504, 'GATEWAY_TIMEOUT')
    expect(await workflowCount()).toBe(before)
  })

  it('validates the body before asking the model: 400 naming the field', async () => {
    const before = await workflowCount()
    const cases: [unknown, string][] = [
      [{}, 'description'],
      [{ description: '' }, 'description'],
      [{ description: '   ' }, 'description'],
      [{ description: 'x'.repeat(4001) }, 'description'],
      [{ description: 42 }, 'description'],
      [{ description: 'ok', name: '' }, 'name'],
      [{ description: 'ok', name: 'x'.repeat(256) }, 'name'],
      [{ description: 'ok', workspace_uuid: 'nope' }, 'workspace_uuid'],
      [{ description: 'ok', model: 'not a slug!' }, 'model'],
      [{ description: 'ok', nodes: [] }, 'nodes'],
    ]
    for (const [body, field] of cases) expectNamed(await generate(alice, body), field)
    // A model the catalog does not know, and the local test model (it does not think): 400 naming model.
    expectNamed(await generate(alice, { description: 'ok', model: 'no-such-model' }), 'model')
    expectNamed(await generate(alice, { description: 'ok', model: 'local-test-model' }), 'model')
    expect(upstream.requests).toHaveLength(0)
    expect(await workflowCount()).toBe(before)
  })

  it('answers 401 without a token and 403 to a read-only token, without asking the model', async () => {
    expectErrorBody(await generate(null, { description: 'Wait after a run' }), 401, 'UNAUTHORIZED')
    expectErrorBody(await generate(await readOnlyToken(t, alice), { description: 'Wait after a run' }), 403, 'FORBIDDEN')
    expect(upstream.requests).toHaveLength(0)
  })

  it("answers 404 for another tenant's workspace_uuid, revealing nothing, without asking the model", async () => {
    const bob = await t.make.user({ name: 'Bob Outsider' })
    const before = await workflowCount()
    const res = await generate(alice, { description: 'Wait after a run', workspace_uuid: bob.workspaceUuid })
    expectErrorBody(res, 404, 'NOT_FOUND')
    expect(JSON.stringify(res.body)).not.toContain('Bob')
    expect(upstream.requests).toHaveLength(0)
    expect(await workflowCount()).toBe(before)
  })

  it('works through the tRPC caller', async () => {
    upstream.enqueue(json(GRAPH))
    const res = await t.as(alice).workflows.generate({ description: 'Wait after a run' })
    expect(res.data).toMatchObject({ name: 'Pause after a run', nodes: NODES, edges: EDGES, is_owner: true })
  })
})
