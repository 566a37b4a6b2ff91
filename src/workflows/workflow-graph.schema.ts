/**
 * The wire shapes of a workflow graph (docs/api/workflows.md): one node, one edge, their lists and the
 * size bounds a request is held to. They check each item on its own; the checks that need the
 * node types (known types, their parameters, edge handles, cycles, one trigger) are
 * `validateGraph` in src/workflows/graph.ts, which the services run on every save.
 */
import { z } from 'zod'
import { refineStorableJson, StorableObject, unstorableText } from '../access/resource.schema.ts'
import { text } from '../access/wire.ts'

/** Most nodes one workflow holds. */
export const MAX_NODES = 500
/** Most edges one workflow holds. */
export const MAX_EDGES = 2000
/** Largest serialized graph (`nodes`, `edges`, `settings`, `static_data`, `pin_data` together), in bytes. */
export const MAX_GRAPH_BYTES = 1024 * 1024

/** A JSON number: trpc-to-openapi coerces plain numbers, a pipe is left alone (see src/access/wire.ts). */
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
const NodePosition = z.union([z.tuple([jsonNumber(), jsonNumber()]), z.looseObject({ x: jsonNumber(), y: jsonNumber() })])

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
