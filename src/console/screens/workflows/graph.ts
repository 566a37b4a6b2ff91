/**
 * A workflow's stored graph (docs/api/workflows.md, "Graphs and node types") and React Flow's
 * nodes and edges, both ways, and a save's 400 issues read as problems of the nodes and edges
 * they name. Stored nodes are `{id, type, name?, parameters, position?, ...}` and edges
 * `{id?, source, target, source_handle?, target_handle?, ...}`: React Flow's shape but for the
 * handles' snake_case and `type`, which React Flow uses to pick a node component; members the
 * editor does not know (a node's `retry`, an editor's own) are kept as they came.
 */
import type { Edge, Node } from '@xyflow/react'
import type { Problem, RouterOutputs } from '../../lib/api.ts'

export type NodeType = RouterOutputs['workflowNodeTypes']['list']['data'][number]
export type Workflow = RouterOutputs['workflows']['retrieve']['data']

/** A node as the service stores it. */
export interface StoredNode {
  id: string
  type: string
  name?: string
  parameters?: Record<string, unknown>
  position?: { x: number; y: number } | [number, number]
  [member: string]: unknown
}

/** An edge as the service stores it. */
export interface StoredEdge {
  id?: string
  source: string
  target: string
  source_handle?: string | null
  target_handle?: string | null
  [member: string]: unknown
}

/** What the editor keeps of a node: its workflow node type, name, parameters and other members. */
export interface StepData extends Record<string, unknown> {
  type: string
  name: string
  parameters: Record<string, unknown>
  extra: Record<string, unknown>
}
export type StepNode = Node<StepData, 'step'>
export type StepEdge = Edge<{ extra: Record<string, unknown> }>

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function positionOf(position: unknown, index: number): { x: number; y: number } {
  if (Array.isArray(position) && typeof position[0] === 'number' && typeof position[1] === 'number') return { x: position[0], y: position[1] }
  if (isRecord(position) && typeof position.x === 'number' && typeof position.y === 'number') return { x: position.x, y: position.y }
  // No position stored (a graph made over the API): a row, left to right.
  return { x: index * 240, y: 80 }
}

/** A node's React Flow label: its name, else its id. */
export const nodeLabel = (node: StepNode) => node.data.name || node.id

/** The stored graph as React Flow's nodes and edges. */
export function toFlow(nodes: unknown[], edges: unknown[]): { nodes: StepNode[]; edges: StepEdge[] } {
  const flowNodes: StepNode[] = nodes.filter(isRecord).map((node, index) => {
    const { id, type, name, parameters, position, ...extra } = node
    return {
      id: String(id),
      type: 'step',
      position: positionOf(position, index),
      data: { type: String(type), name: typeof name === 'string' ? name : '', parameters: isRecord(parameters) ? parameters : {}, extra },
    }
  })
  const flowEdges: StepEdge[] = edges.filter(isRecord).map((edge, index) => {
    const { id, source, target, source_handle, target_handle, ...extra } = edge
    return {
      id: typeof id === 'string' ? id : `edge-${index + 1}`,
      source: String(source),
      target: String(target),
      sourceHandle: typeof source_handle === 'string' ? source_handle : null,
      targetHandle: typeof target_handle === 'string' ? target_handle : null,
      data: { extra: { ...extra, ...(typeof id === 'string' ? {} : { generatedId: true }) } },
    }
  })
  return { nodes: flowNodes, edges: flowEdges }
}

/** React Flow's nodes and edges as the graph to store, in the same order (a save's issues name them by index). */
export function toStored(nodes: StepNode[], edges: StepEdge[]): { nodes: StoredNode[]; edges: StoredEdge[] } {
  return {
    nodes: nodes.map((node) => ({
      ...node.data.extra,
      id: node.id,
      type: node.data.type,
      ...(node.data.name.trim() ? { name: node.data.name.trim() } : {}),
      parameters: node.data.parameters,
      position: { x: Math.round(node.position.x), y: Math.round(node.position.y) },
    })),
    edges: edges.map((edge) => {
      const { generatedId, ...extra } = edge.data?.extra ?? {}
      return {
        ...extra,
        // An edge stored without an id keeps none: the editor's own is not worth storing.
        ...(generatedId ? {} : { id: edge.id }),
        source: edge.source,
        target: edge.target,
        ...(edge.sourceHandle ? { source_handle: edge.sourceHandle } : {}),
        ...(edge.targetHandle ? { target_handle: edge.targetHandle } : {}),
      }
    }),
  }
}

/** The output handles of a node: `[null]` for one unnamed output, else the names edges use. */
export function outputsOf(data: StepData, type: NodeType | undefined): (string | null)[] {
  if (!type || type.outputs === null) return [null]
  if (Array.isArray(type.outputs)) return type.outputs
  // "dynamic": a switch's cases by name, and "fallback" unless it is turned off.
  const cases = Array.isArray(data.parameters.cases) ? data.parameters.cases : []
  const names = cases.map((item) => (isRecord(item) && typeof item.name === 'string' ? item.name : '')).filter(Boolean)
  return [...new Set(names), ...(data.parameters.fallback === false ? [] : ['fallback'])]
}

/** A node id not yet used: `set`, `set_2`, ... */
export function freshId(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base
  let n = 2
  while (taken.has(`${base}_${n}`)) n += 1
  return `${base}_${n}`
}

/** One issue of a save, placed on what it names. */
export interface GraphProblem {
  key: string
  message: string
  /** The node it names, by id. */
  nodeId?: string
  /** The edge it names, by React Flow id. */
  edgeId?: string
  /** Below the node or edge: `parameters.url`, `type`, `source_handle`; empty for the whole of it. */
  field: string
}

/**
 * A save's 400 issues (`nodes.3.parameters.url`, `edges.1.source_handle`, `nodes`, `name`) read
 * against the nodes and edges that were sent, in the order they were sent.
 */
export function graphProblems(problem: Problem, sent: { nodes: StepNode[]; edges: StepEdge[] }): GraphProblem[] {
  return problem.issues.map((issue, index) => {
    const path = issue.path.map(String)
    // Tolerate a prefix such as `graph.`: the list's name is what places the issue.
    const at = path.findIndex((segment) => segment === 'nodes' || segment === 'edges')
    const key = `${index}:${path.join('.')}`
    if (at < 0 || path.length <= at + 1) return { key, message: issue.message, field: path.join('.') }
    const position = Number(path[at + 1])
    const field = path.slice(at + 2).join('.')
    if (path[at] === 'nodes') return { key, message: issue.message, nodeId: sent.nodes[position]?.id, field }
    return { key, message: issue.message, edgeId: sent.edges[position]?.id, field }
  })
}

/**
 * Each node's part in an execution shown on the canvas: the status of its run when it ran; while the
 * execution is under way, `running` for a node whose every predecessor has run (a trigger before
 * any node ran) and `waiting` for the others; once it ended, `not run`.
 */
export function runStatuses(
  execution: { status: string; data: { node_id: string; status: string }[] },
  nodes: StepNode[],
  edges: StepEdge[],
  catalog: Map<string, NodeType>,
): Map<string, string> {
  const ran = new Map(execution.data.map((run) => [run.node_id, run.status]))
  const underway = execution.status === 'queued' || execution.status === 'running'
  const statuses = new Map<string, string>()
  for (const node of nodes) {
    const own = ran.get(node.id)
    if (own) {
      statuses.set(node.id, own)
      continue
    }
    if (!underway) {
      statuses.set(node.id, 'not run')
      continue
    }
    const sources = edges.filter((edge) => edge.target === node.id).map((edge) => edge.source)
    const ready =
      execution.status === 'running' &&
      (sources.length ? sources.every((source) => ran.has(source)) : catalog.get(node.data.type)?.kind === 'trigger' && ran.size === 0)
    statuses.set(node.id, ready ? 'running' : 'waiting')
  }
  return statuses
}
