/**
 * Graph validation on save (docs/api/workflows.md) through the real endpoints
 * `POST /api/v1/workflows` and `PUT /api/v1/workflows/{workflow_uuid}`: each rule answers 400
 * with `issues[].path` naming the node or edge and stores nothing; a sound graph saves. And the
 * node type catalogue `GET /api/v1/workflow-node-types`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NODE_TYPES } from '../src/workflows/node-types.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { expectErrorBody } from './helpers/expect.ts'

const trigger = { id: 'start', type: 'manual_trigger', parameters: {} }
const set = (id: string, values: Record<string, unknown> = { seen: true }) => ({ id, type: 'set', parameters: { values } })

/** A graph using every kind of edge: branches of an if and a switch, a merge, retry on a node. */
const SOUND = {
  nodes: [
    { id: 'hook', type: 'webhook_trigger', parameters: { description: 'Orders arrive here' } },
    {
      id: 'fetch',
      type: 'http_request',
      parameters: {
        method: 'POST',
        url: "='https://api.example.com/orders/' & $.body.id",
        body: { id: '=$.body.id', note: 'literal' },
        timeout_ms: 5000,
      },
      retry: { max_attempts: 5, delay_ms: 100 },
    },
    { id: 'check', type: 'if', parameters: { condition: '=$.status = 200' } },
    {
      id: 'route',
      type: 'switch',
      parameters: {
        cases: [
          { name: 'big', condition: '=$.body.total > 100' },
          { name: 'small', condition: true },
        ],
      },
    },
    set('big'),
    set('small'),
    set('other'),
    set('failed'),
    { id: 'join', type: 'merge', parameters: { mode: 'append' } },
    { id: 'pause', type: 'wait', parameters: { seconds: '=$count($)' } },
    { id: 'reply', type: 'respond_to_webhook', parameters: { status: 202 } },
  ],
  edges: [
    { id: 'e1', source: 'hook', target: 'fetch' },
    { id: 'e2', source: 'fetch', target: 'check', source_handle: null },
    { id: 'e3', source: 'check', target: 'route', source_handle: 'true' },
    { id: 'e4', source: 'check', target: 'failed', source_handle: 'false' },
    { id: 'e5', source: 'route', target: 'big', source_handle: 'big' },
    { id: 'e6', source: 'route', target: 'small', source_handle: 'small' },
    { id: 'e7', source: 'route', target: 'other', source_handle: 'fallback' },
    { id: 'e8', source: 'big', target: 'join' },
    { id: 'e9', source: 'small', target: 'join' },
    { id: 'e10', source: 'other', target: 'join' },
    { id: 'e11', source: 'join', target: 'pause' },
    { id: 'e12', source: 'pause', target: 'reply' },
    { id: 'e13', source: 'failed', target: 'reply' },
  ],
}

describe('workflow graph validation and node types', () => {
  let t: TestApp
  let alice: TestUser

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Graphs' })
  })
  afterAll(async () => t?.close())

  const create = (name: string, graph: { nodes?: unknown[]; edges?: unknown[] }) =>
    t.http('POST', '/api/v1/workflows', { token: alice.token, body: { name, ...graph } })
  const update = (uuid: string, body: Record<string, unknown>) => t.http('PUT', `/api/v1/workflows/${uuid}`, { token: alice.token, body })
  const stored = async (name: string) => (await t.sql('select 1 from workflows where name = ?', [name])).length

  /** A 400 whose issues are exactly these paths (each with a message), and nothing stored under `name`. */
  async function expectIssues(name: string, graph: { nodes?: unknown[]; edges?: unknown[] }, paths: (string | number)[][]) {
    const res = await create(name, graph)
    expect(res.status, JSON.stringify(res.body)).toBe(400)
    expect(res.body.code).toBe('BAD_REQUEST')
    expect(res.body.issues).toEqual(paths.map((path) => ({ code: 'custom', path, message: expect.any(String) })))
    expect(await stored(name)).toBe(0)
    return res.body.issues as { path: (string | number)[]; message: string }[]
  }

  describe('workflows.create (POST /api/v1/workflows)', () => {
    it('saves a sound graph as sent, and an empty graph (a draft)', async () => {
      const res = await create('Sound', SOUND)
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data).toMatchObject({ nodes: SOUND.nodes, edges: SOUND.edges })
      expect((await create('Draft', { nodes: [], edges: [] })).status).toBe(201)
      expect((await create('Lone trigger', { nodes: [trigger] })).status).toBe(201)
    })

    it('answers 400 naming nodes.N.type for an unknown node type', async () => {
      const [issue] = await expectIssues('Unknown type', { nodes: [trigger, { id: 'x', type: 'send_fax' }] }, [['nodes', 1, 'type']])
      expect(issue.message).toBe('Unknown node type "send_fax"')
    })

    it('answers 400 naming each invalid parameter under nodes.N.parameters', async () => {
      const nodes = [trigger, { id: 'call', type: 'http_request', parameters: { url: 'ftp://example.com', method: 'TRACE', extra: 1 } }]
      const issues = await expectIssues('Bad parameters', { nodes }, [
        ['nodes', 1, 'parameters', 'method'],
        ['nodes', 1, 'parameters', 'url'],
        ['nodes', 1, 'parameters'],
      ])
      expect(issues[1].message).toBe('must be an http or https URL')
      await expectIssues('Missing parameter', { nodes: [trigger, { id: 'w', type: 'wait', parameters: {} }] }, [
        ['nodes', 1, 'parameters', 'seconds'],
      ])
    })

    it('answers 400 naming an expression that does not compile, wherever it is', async () => {
      const nodes = [
        trigger,
        { id: 's', type: 'set', parameters: { values: { ok: '=$.a', broken: '=$.a +' } } },
        { id: 'w', type: 'wait', parameters: { seconds: '=(' } },
      ]
      const edges = [{ source: 'start', target: 's' }]
      const issues = await expectIssues('Bad expression', { nodes, edges }, [
        ['nodes', 1, 'parameters', 'values', 'broken'],
        ['nodes', 2, 'parameters', 'seconds'],
      ])
      expect(issues[0].message).toMatch(/^Invalid expression: /)
    })

    it('answers 400 naming nodes.N.retry for a retry out of bounds or with unknown members', async () => {
      const nodes = [
        trigger,
        { ...set('a'), retry: { max_attempts: 11, delay_ms: 0 } },
        { ...set('b'), retry: { delay_ms: 60_001, backoff: 'linear' } },
      ]
      await expectIssues('Bad retry', { nodes }, [
        ['nodes', 1, 'retry', 'max_attempts'],
        ['nodes', 2, 'retry', 'delay_ms'],
        ['nodes', 2, 'retry'],
      ])
    })

    it('answers 400 naming edges.N.source_handle for a handle the source node does not have', async () => {
      const nodes = [trigger, { id: 'check', type: 'if', parameters: { condition: true } }, set('a'), set('b')]
      const edges = [
        { source: 'start', target: 'check' },
        { source: 'check', target: 'a', source_handle: 'true' },
        { source: 'check', target: 'b', source_handle: 'maybe' },
        { source: 'check', target: 'b' },
        { source: 'a', target: 'b', source_handle: 'out' },
      ]
      const issues = await expectIssues('Bad handles', { nodes, edges }, [
        ['edges', 2, 'source_handle'],
        ['edges', 3, 'source_handle'],
        ['edges', 4, 'source_handle'],
      ])
      expect(issues[0].message).toBe('source_handle must name an output of "check": "true", "false"')
      expect(issues[2].message).toBe('"a" has one output: the edge names no source_handle')
    })

    it("checks a switch's handles against its cases and fallback", async () => {
      const nodes = [
        trigger,
        { id: 'route', type: 'switch', parameters: { cases: [{ name: 'a', condition: true }], fallback: false } },
        set('x'),
      ]
      await expectIssues(
        'Switch handles',
        {
          nodes,
          edges: [
            { source: 'start', target: 'route' },
            { source: 'route', target: 'x', source_handle: 'fallback' },
          ],
        },
        [['edges', 1, 'source_handle']],
      )
    })

    it('answers 400 naming edges.N.target for an edge into a trigger', async () => {
      const nodes = [trigger, set('a'), set('b')]
      const edges = [
        { source: 'start', target: 'a' },
        { source: 'b', target: 'start' },
      ]
      await expectIssues('Into trigger', { nodes, edges }, [['edges', 1, 'target']])
    })

    it('answers 400 naming edges.N for each edge that closes a cycle', async () => {
      const nodes = [trigger, set('a'), set('b'), set('c')]
      const edges = [
        { source: 'start', target: 'a' },
        { source: 'a', target: 'b' },
        { source: 'b', target: 'c' },
        { source: 'c', target: 'a' },
        { source: 'c', target: 'c' },
      ]
      const issues = await expectIssues('Cycle', { nodes, edges }, [
        ['edges', 3],
        ['edges', 4],
      ])
      expect(issues[0].message).toMatch(/closes a cycle through "a"/)
    })

    it('answers 400 naming nodes for a graph without a trigger, and nodes.N.type for the second trigger', async () => {
      await expectIssues('No trigger', { nodes: [set('a'), set('b')], edges: [{ source: 'a', target: 'b' }] }, [['nodes']])
      const nodes = [
        set('a'),
        trigger,
        { id: 'hook', type: 'webhook_trigger' },
        { id: 'tick', type: 'schedule_trigger', parameters: { cron: '0 * * * *' } },
      ]
      const issues = await expectIssues('Two triggers', { nodes }, [
        ['nodes', 2, 'type'],
        ['nodes', 3, 'type'],
      ])
      expect(issues[0].message).toMatch(/exactly one trigger/)
    })

    it('answers 400 naming the dangling end of an edge', async () => {
      await expectIssues('Dangling', { nodes: [trigger], edges: [{ source: 'start', target: 'ghost' }] }, [['edges', 0, 'target']])
    })
  })

  describe('workflows.update (PUT /api/v1/workflows/{workflow_uuid})', () => {
    it('checks the merged graph, answers 400 naming the node or edge and leaves the row unchanged', async () => {
      const wf = (await create('Editable', { nodes: [trigger, set('a')], edges: [{ source: 'start', target: 'a' }] })).body.data
      const before = (await t.sql('select nodes, edges, updated_at from workflows where uuid = ?', [wf.uuid]))[0]
      const badNodes = await update(wf.uuid, { nodes: [trigger, { id: 'a', type: 'if', parameters: { condition: '=(' } }] })
      expect(badNodes.status).toBe(400)
      // While its parameters are invalid the if's handles are unknown, so the stored edge is not judged by them.
      expect(badNodes.body.issues.map((issue: { path: unknown[] }) => issue.path)).toEqual([['nodes', 1, 'parameters', 'condition']])
      const cycle = await update(wf.uuid, {
        edges: [
          { source: 'start', target: 'a' },
          { source: 'a', target: 'a' },
        ],
      })
      expect(cycle.status).toBe(400)
      expect(cycle.body.issues.map((issue: { path: unknown[] }) => issue.path)).toEqual([['edges', 1]])
      expect((await t.sql('select nodes, edges, updated_at from workflows where uuid = ?', [wf.uuid]))[0]).toEqual(before)
      const fine = await update(wf.uuid, { nodes: [trigger, { id: 'a', type: 'wait', parameters: { seconds: 1 } }] })
      expect(fine.status, JSON.stringify(fine.body)).toBe(200)
    })
  })

  describe('workflowNodeTypes.list (GET /api/v1/workflow-node-types)', () => {
    it('answers 200 with every node type, its parameters as JSON Schema, outputs and default retry', async () => {
      const res = await t.http('GET', '/api/v1/workflow-node-types', { token: alice.token })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['data'])
      const types = res.body.data as { type: string; parameters: Record<string, unknown> }[]
      // Every registered type (the registry's list is pinned in workflow-nodes.test.ts), in its order.
      expect(types.map((type) => type.type)).toEqual([...NODE_TYPES.keys()])
      for (const type of types) {
        expect(Object.keys(type).sort()).toEqual(['default_retry', 'description', 'kind', 'label', 'outputs', 'parameters', 'type'])
        expect(type.parameters).toMatchObject({
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          additionalProperties: false,
        })
      }
      expect(types.find((type) => type.type === 'http_request')).toMatchObject({
        kind: 'action',
        outputs: null,
        default_retry: { max_attempts: 3, delay_ms: 200 },
        parameters: {
          required: ['url'],
          properties: { method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'], default: 'GET' } },
        },
      })
      expect(types.find((type) => type.type === 'if')).toMatchObject({ outputs: ['true', 'false'], default_retry: null })
      expect(types.find((type) => type.type === 'schedule_trigger')).toMatchObject({ kind: 'trigger', parameters: { required: ['cron'] } })
      expect((await t.as(alice).workflowNodeTypes.list()).data).toEqual(res.body.data)
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/workflow-node-types'), 401, 'UNAUTHORIZED')
    })
  })
})
