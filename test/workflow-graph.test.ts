/**
 * Validation of workflow graphs (src/workflows/graph.ts; docs/api/workflows.md): node and edge
 * shapes, unique ids, edges pointing at existing nodes, storable JSON
 * (src/access/resource.schema.ts `unstorableJson`, `StorableObject`), and what `validateGraph`
 * adds with the node types (each rule through the endpoints: workflow-graph-validation.test.ts).
 * Pure functions: no database.
 */
import { describe, expect, it } from 'vitest'
import { STORED_JSON_MAX_DEPTH as MAX_JSON_DEPTH, StorableObject, unstorableJson } from '../src/access/resource.schema.ts'
import { jsonBytes } from '../src/access/wire.ts'
import { MAX_EDGES, MAX_NODES, WorkflowEdge, WorkflowEdges, WorkflowNode, WorkflowNodes } from '../src/workflows/workflow-graph.schema.ts'
import { graphIssues, validateGraph } from '../src/workflows/graph.ts'

const paths = (result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  result.success ? [] : [...new Set(result.error?.issues.map((issue) => issue.path.join('.')))]

describe('WorkflowNode (shape of one node)', () => {
  it('accepts id and type alone, and keeps members it does not know', () => {
    const node = { id: 'a', type: 'trigger.manual', color: 'red', disabled: true }
    expect(WorkflowNode.parse(node)).toEqual(node)
  })

  it('accepts position as [x, y] or {x, y}, and name and parameters', () => {
    expect(WorkflowNode.safeParse({ id: 'a', type: 't', position: [1.5, -2] }).success).toBe(true)
    expect(WorkflowNode.safeParse({ id: 'a', type: 't', position: { x: 0, y: 10 } }).success).toBe(true)
    expect(WorkflowNode.safeParse({ id: 'a', type: 't', name: 'Start', parameters: { url: 'x', n: 1 } }).success).toBe(true)
  })

  it.each([
    ['a missing id', { type: 't' }, 'id'],
    ['an empty id', { id: '', type: 't' }, 'id'],
    ['an id over 100 characters', { id: 'x'.repeat(101), type: 't' }, 'id'],
    ['a numeric id', { id: 7, type: 't' }, 'id'],
    ['an id with a NUL character', { id: 'a\u0000', type: 't' }, 'id'],
    ['a missing type', { id: 'a' }, 'type'],
    ['a type over 100 characters', { id: 'a', type: 't'.repeat(101) }, 'type'],
    ['a name that is not a string', { id: 'a', type: 't', name: 5 }, 'name'],
    ['parameters that are an array', { id: 'a', type: 't', parameters: [1] }, 'parameters'],
    ['a position of three numbers', { id: 'a', type: 't', position: [1, 2, 3] }, 'position'],
    ['a position with a string coordinate', { id: 'a', type: 't', position: { x: '1', y: 2 } }, 'position'],
    ['a position that is a string', { id: 'a', type: 't', position: '1,2' }, 'position'],
  ])('refuses %s, naming the member', (_label, node, path) => {
    expect(paths(WorkflowNode.safeParse(node))).toContain(path)
  })

  it('refuses a node that is not an object', () => {
    expect(paths(WorkflowNodes.safeParse([{ id: 'a', type: 't' }, 'b']))).toEqual(['1'])
  })
})

describe('WorkflowEdge (shape of one edge)', () => {
  it('accepts source and target, optional id and handles, and keeps other members', () => {
    const edge = { id: 'e1', source: 'a', target: 'b', source_handle: 'true', target_handle: null, animated: true }
    expect(WorkflowEdge.parse(edge)).toEqual(edge)
  })

  it.each([
    ['a missing source', { target: 'b' }, 'source'],
    ['a missing target', { source: 'a' }, 'target'],
    ['a numeric target', { source: 'a', target: 2 }, 'target'],
    ['an empty id', { id: '', source: 'a', target: 'b' }, 'id'],
    ['a source_handle that is a number', { source: 'a', target: 'b', source_handle: 1 }, 'source_handle'],
    ['a target_handle over 100 characters', { source: 'a', target: 'b', target_handle: 'h'.repeat(101) }, 'target_handle'],
  ])('refuses %s, naming the member', (_label, edge, path) => {
    expect(paths(WorkflowEdge.safeParse(edge))).toContain(path)
  })
})

describe('list bounds', () => {
  it(`holds at most ${MAX_NODES} nodes and ${MAX_EDGES} edges`, () => {
    const nodes = Array.from({ length: MAX_NODES }, (_, i) => ({ id: `n${i}`, type: 't' }))
    expect(WorkflowNodes.safeParse(nodes).success).toBe(true)
    expect(WorkflowNodes.safeParse([...nodes, { id: 'x', type: 't' }]).success).toBe(false)
    const edges = Array.from({ length: MAX_EDGES }, () => ({ source: 'n0', target: 'n1' }))
    expect(WorkflowEdges.safeParse(edges).success).toBe(true)
    expect(WorkflowEdges.safeParse([...edges, { source: 'n0', target: 'n1' }]).success).toBe(false)
  })
})

describe('graphIssues (checks across nodes and edges)', () => {
  const nodes = [
    { id: 'start', type: 'trigger.manual' },
    { id: 'fetch', type: 'http.request' },
    { id: 'done', type: 'respond' },
  ]

  it('finds nothing wrong in a sound graph, an empty one, or a graph with a cycle (cycles are for validateGraph)', () => {
    expect(graphIssues(nodes, [{ source: 'start', target: 'fetch' }, { source: 'fetch', target: 'done' }])).toEqual([])
    expect(graphIssues([], [])).toEqual([])
    expect(graphIssues(nodes, [{ source: 'fetch', target: 'done' }, { source: 'done', target: 'fetch' }])).toEqual([])
  })

  it('names a duplicate node id at the later node', () => {
    const issues = graphIssues([...nodes, { id: 'fetch', type: 'x' }], [])
    expect(issues).toEqual([{ path: ['nodes', 3, 'id'], message: 'Duplicate node id "fetch"' }])
  })

  it('names the end of an edge that points at no node', () => {
    const issues = graphIssues(nodes, [
      { source: 'start', target: 'fetch' },
      { source: 'start', target: 'fetch' },
      { source: 'fetch', target: 'done' },
      { source: 'fetch', target: 'nowhere' },
    ])
    expect(issues).toEqual([{ path: ['edges', 3, 'target'], message: 'No node has the id "nowhere"' }])
  })

  it('names both ends when both dangle, and every bad edge in order', () => {
    const issues = graphIssues(nodes, [{ source: 'x', target: 'y' }, { source: 'start', target: 'z' }])
    expect(issues.map((issue) => issue.path)).toEqual([
      ['edges', 0, 'source'],
      ['edges', 0, 'target'],
      ['edges', 1, 'target'],
    ])
  })

  it('names a duplicate edge id; edges without ids may repeat', () => {
    const issues = graphIssues(nodes, [
      { id: 'e', source: 'start', target: 'fetch' },
      { source: 'start', target: 'fetch' },
      { source: 'start', target: 'fetch' },
      { id: 'e', source: 'fetch', target: 'done' },
    ])
    expect(issues).toEqual([{ path: ['edges', 3, 'id'], message: 'Duplicate edge id "e"' }])
  })

  it('reports items without string ids or ends (values that never passed the schemas)', () => {
    expect(graphIssues([{ type: 't' }, 'x'], [null, { source: 1, target: 'a' }]).map((issue) => issue.path)).toEqual([
      ['nodes', 0, 'id'],
      ['nodes', 1, 'id'],
      ['edges', 0, 'source'],
      ['edges', 0, 'target'],
      ['edges', 1, 'source'],
      ['edges', 1, 'target'],
    ])
  })

  it('clips long ids in messages', () => {
    const id = 'x'.repeat(100)
    const [issue] = graphIssues([{ id }, { id }], [])
    expect(issue.message.length).toBeLessThan(70)
  })
})

describe('validateGraph (checks that need the node types)', () => {
  const chain = (length: number) => ({
    nodes: [{ id: 'n0', type: 'manual_trigger' }, ...Array.from({ length: length - 1 }, (_, i) => ({ id: `n${i + 1}`, type: 'set' }))],
    edges: Array.from({ length: length - 1 }, (_, i) => ({ source: `n${i}`, target: `n${i + 1}` })),
  })

  it('walks a chain of MAX_NODES nodes without trouble, and finds the one edge closing a ring', () => {
    const { nodes, edges } = chain(MAX_NODES)
    expect(validateGraph(nodes, edges)).toEqual([])
    const ring = [...edges, { source: `n${MAX_NODES - 1}`, target: 'n1' }]
    expect(validateGraph(nodes, ring).map((issue) => issue.path)).toEqual([['edges', MAX_NODES - 1]])
  })

  it('runs the structural checks too, and answers an empty graph as valid', () => {
    expect(validateGraph([], [])).toEqual([])
    const issues = validateGraph([{ id: 'a', type: 'manual_trigger' }, { id: 'a', type: 'set' }], [{ source: 'a', target: 'b' }])
    expect(issues.map((issue) => issue.path)).toEqual([
      ['nodes', 1, 'id'],
      ['edges', 0, 'target'],
    ])
  })

  it("names a literal's own problem rather than the expression-or-literal union's", () => {
    const nodes = [
      { id: 't', type: 'manual_trigger' },
      { id: 'h', type: 'http_request', parameters: { url: 42, query: { a: { deep: true } }, headers: { 'bad name': 'x' } } },
    ]
    expect(validateGraph(nodes, [])).toEqual([
      { path: ['nodes', 1, 'parameters', 'url'], message: 'Invalid input: expected string' },
      { path: ['nodes', 1, 'parameters', 'headers', 'bad name'], message: 'Invalid key: must be an HTTP header name' },
      { path: ['nodes', 1, 'parameters', 'query', 'a'], message: 'Invalid input: expected string, number or boolean' },
    ])
  })

  it('reports nodes without a string type, and leaves edges from nodes with invalid parameters unjudged by their handles', () => {
    const nodes = [{ id: 't', type: 'manual_trigger' }, { id: 'x' }, { id: 'i', type: 'if', parameters: { condition: '=(' } }, { id: 's', type: 'set' }]
    const issues = validateGraph(nodes, [{ source: 'i', target: 's', source_handle: 'anything' }])
    expect(issues.map((issue) => issue.path)).toEqual([
      ['nodes', 1, 'type'],
      ['nodes', 2, 'parameters', 'condition'],
    ])
  })
})

describe('unstorableJson (what jsonb cannot hold)', () => {
  it('passes ordinary JSON', () => {
    expect(unstorableJson({ a: [1, 'two', { three: null, four: true }], 'ключ': '😀' }, ['settings'])).toBeNull()
  })

  it('names a string holding NUL, deep inside', () => {
    expect(unstorableJson({ a: [{ b: 'ok' }, { c: 'bad\u0000' }] }, ['pin_data'])).toEqual({
      path: ['pin_data', 'a', 1, 'c'],
      message: 'must not hold NUL characters or lone surrogates',
    })
  })

  it('names a lone surrogate in a value or a key', () => {
    expect(unstorableJson(['\ud800'], ['nodes'])?.path).toEqual(['nodes', 0])
    expect(unstorableJson({ ['k\udc00']: 1 }, ['static_data'])?.path).toEqual(['static_data', 'k\udc00'])
  })

  it('refuses nesting past the limit without recursion', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 10_000; i += 1) deep = [deep]
    expect(unstorableJson(deep, ['settings'])?.message).toMatch(/nested deeper/)
    let fine: unknown = 1
    for (let i = 0; i < MAX_JSON_DEPTH; i += 1) fine = { a: fine }
    expect(unstorableJson(fine, ['settings'])).toBeNull()
    expect(unstorableJson({ a: fine }, ['settings'])?.path).toEqual(['settings', ...Array(MAX_JSON_DEPTH).fill('a')])
  })
})

describe('StorableObject and the members nodes and edges keep as sent', () => {
  const deep = (depth: number): unknown => (depth === 0 ? 1 : { a: deep(depth - 1) })

  it('refuses parameters nested past the limit, naming the node member even when other members are wrong', () => {
    expect(paths(WorkflowNode.safeParse({ id: 'a', type: 't', parameters: { x: deep(MAX_JSON_DEPTH) } }))[0]).toMatch(/^parameters\.x\.a/)
    const both = paths(WorkflowNodes.safeParse([{ parameters: deep(20) }]))
    expect(both).toContain('0.id')
    expect(both.some((path) => path.startsWith('0.parameters'))).toBe(true)
  })

  it('checks unknown members of nodes and edges for NUL, lone surrogates and depth', () => {
    expect(paths(WorkflowNode.safeParse({ id: 'a', type: 't', note: 'x\u0000' }))).toEqual(['note'])
    expect(paths(WorkflowEdge.safeParse({ source: 'a', target: 'b', data: { label: '\udfff' } }))).toEqual(['data.label'])
    expect(paths(WorkflowEdge.safeParse({ source: 'a', target: 'b', data: deep(20) }))[0]).toMatch(/^data\.a/)
    expect(WorkflowNode.safeParse({ id: 'a', type: 't', data: deep(MAX_JSON_DEPTH) }).success).toBe(true)
  })

  it('accepts any JSON object within the limit and refuses arrays and scalars', () => {
    expect(StorableObject().safeParse({ a: [1, { b: null }], c: 'ok' }).success).toBe(true)
    for (const value of [[], 'x', 1, null]) expect(StorableObject().safeParse(value).success).toBe(false)
  })
})

describe('jsonBytes (the measure of MAX_GRAPH_BYTES)', () => {
  it('counts UTF-8 bytes of the serialized parts', () => {
    expect(jsonBytes({ a: 'é' })).toBe(Buffer.byteLength('{"a":"é"}'))
  })
})
