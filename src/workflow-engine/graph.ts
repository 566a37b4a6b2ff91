/**
 * Structural validation of a workflow graph (API.md section 7; issue 3, item 4): the shape of
 * each node and edge (zod schemas the request schemas reuse) and the checks across them
 * ({@link graphIssues}): node ids unique, edges pointing at existing nodes. Pure functions, no
 * database. Node types, their parameters, cycles and triggers are checked when the executor
 * arrives (a later issue); until then any `type` string is stored as given.
 */
import { z } from 'zod'
import type { FieldPath } from '../errors.ts'
import { refineStorableJson, StorableObject, unstorableText } from '../schemas/resource.schema.ts'
import { text } from '../schemas/wire.ts'

/** Most nodes one workflow holds. */
export const MAX_NODES = 500
/** Most edges one workflow holds. */
export const MAX_EDGES = 2000
/** Largest serialized graph (`nodes`, `edges`, `settings`, `static_data`, `pin_data` together), in bytes. */
export const MAX_GRAPH_BYTES = 1024 * 1024

/** One problem found in a graph: a path into the request, as zod writes it (`['edges', 3, 'target']`). */
export interface GraphIssue {
  path: FieldPath
  message: string
}

/** A JSON number: trpc-to-openapi coerces plain numbers, a pipe is left alone (see src/schemas/wire.ts). */
const jsonNumber = () => z.number().pipe(z.number())

/** Checks the members of a node or edge its schema does not name (kept as sent). */
const checkExtras = (known: readonly string[]) => (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
  for (const [key, member] of Object.entries(value)) {
    if (known.includes(key)) continue
    if (unstorableText(key)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'keys must not hold NUL characters or lone surrogates' })
    } else refineStorableJson(member, ctx, [key])
  }
}

/** `[x, y]` or `{x, y}`: where an editor draws the node. */
const NodePosition = z.union([
  z.tuple([jsonNumber(), jsonNumber()]),
  z.looseObject({ x: jsonNumber(), y: jsonNumber() }),
])

/**
 * A node: `id` (1..100 characters, unique in the workflow), `type` (1..100), optional `name`,
 * `parameters` (an object) and `position`; other members are kept as sent.
 */
export const WorkflowNode = z
  .looseObject({
    id: text(100, 1),
    type: text(100, 1),
    name: text(255).optional(),
    parameters: StorableObject().optional(),
    position: NodePosition.optional(),
  })
  .superRefine(checkExtras(['id', 'type', 'name', 'parameters', 'position']))
  .meta({ id: 'WorkflowNode' })

/**
 * An edge (the shape graph editors such as React Flow use): `source` and `target` name node ids,
 * optional `id` (unique when given), `source_handle` and `target_handle`; other members kept.
 */
export const WorkflowEdge = z
  .looseObject({
    id: text(100, 1).optional(),
    source: text(100, 1),
    target: text(100, 1),
    source_handle: text(100).nullable().optional(),
    target_handle: text(100).nullable().optional(),
  })
  .superRefine(checkExtras(['id', 'source', 'target', 'source_handle', 'target_handle']))
  .meta({ id: 'WorkflowEdge' })

/** The node list of a request: at most {@link MAX_NODES}. */
export const WorkflowNodes = z.array(WorkflowNode).max(MAX_NODES)
/** The edge list of a request: at most {@link MAX_EDGES}. */
export const WorkflowEdges = z.array(WorkflowEdge).max(MAX_EDGES)

/** A string member of a JSON object, or undefined. */
function stringMember(item: unknown, key: string): string | undefined {
  if (typeof item !== 'object' || item === null || !(key in item)) return undefined
  const value: unknown = Reflect.get(item, key)
  return typeof value === 'string' ? value : undefined
}

/**
 * The checks across nodes and edges of a whole graph (each item already passed
 * {@link WorkflowNode} / {@link WorkflowEdge}, either now or when it was stored): duplicate node
 * ids (`['nodes', i, 'id']`), duplicate edge ids (`['edges', i, 'id']`) and edges whose
 * `source`/`target` name no node (`['edges', i, 'source' | 'target']`). Items without a string
 * `id`/`source`/`target` are reported too. Answers every problem, in order; empty means sound.
 */
export function graphIssues(nodes: readonly unknown[], edges: readonly unknown[]): GraphIssue[] {
  const issues: GraphIssue[] = []
  const nodeIds = new Set<string>()
  nodes.forEach((node, index) => {
    const id = stringMember(node, 'id')
    if (id === undefined) return void issues.push({ path: ['nodes', index, 'id'], message: 'A node needs a string id' })
    if (nodeIds.has(id)) issues.push({ path: ['nodes', index, 'id'], message: `Duplicate node id "${clip(id)}"` })
    nodeIds.add(id)
  })
  const edgeIds = new Set<string>()
  edges.forEach((edge, index) => {
    const id = stringMember(edge, 'id')
    if (id !== undefined) {
      if (edgeIds.has(id)) issues.push({ path: ['edges', index, 'id'], message: `Duplicate edge id "${clip(id)}"` })
      edgeIds.add(id)
    }
    for (const end of ['source', 'target'] as const) {
      const target = stringMember(edge, end)
      if (target === undefined) issues.push({ path: ['edges', index, end], message: `An edge needs a string ${end}` })
      else if (!nodeIds.has(target)) issues.push({ path: ['edges', index, end], message: `No node has the id "${clip(target)}"` })
    }
  })
  return issues
}

const clip = (value: string) => (value.length > 40 ? `${value.slice(0, 40)}…` : value)
