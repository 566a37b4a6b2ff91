/**
 * Validation of a workflow graph on save (docs/api/workflows.md). The
 * shape of each node and edge is a wire schema (`WorkflowNode`, `WorkflowEdge` in
 * src/workflows/workflow-graph.schema.ts); here are the structural checks across them
 * ({@link graphIssues}: node ids unique, edges pointing at existing nodes) and the checks that
 * need the node types ({@link validateGraph}: known types, valid parameters and retry,
 * expressions that compile, edge handles the source node has, no edge into a trigger, no cycle,
 * exactly one trigger). Pure functions, no database; every problem names the node or edge by its
 * path in the request (`['nodes', 2, 'parameters', 'url']`, `['edges', 0, 'source_handle']`).
 */
import { z } from 'zod'
import type { FieldPath } from '../platform/errors.ts'
import { isRecord } from '../access/wire.ts'
import { expressionIssues, isExpression } from './expressions.ts'
import { nodeType } from './node-types.ts'
import type { NodeType } from './types.ts'

/** One problem found in a graph: a path into the request, as zod writes it (`['edges', 3, 'target']`). */
export interface GraphIssue {
  path: FieldPath
  message: string
}

/** A string member of a JSON object, or undefined. */
function stringMember(item: unknown, key: string): string | undefined {
  const value = member(item, key)
  return typeof value === 'string' ? value : undefined
}

/**
 * The checks across nodes and edges of a whole graph (each item already passed `WorkflowNode` /
 * `WorkflowEdge` of the wire schemas, either now or when it was stored): duplicate node
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

/** Most attempts a node's `retry` may ask for (the first one included). */
export const MAX_RETRY_ATTEMPTS = 10
/** Longest first retry delay a node's `retry` may ask for, in milliseconds. */
export const MAX_RETRY_DELAY_MS = 60_000

/** A node's optional `retry`: attempts in all and the first delay (doubled per attempt); each member optional. */
export const NodeRetry = z.strictObject({
  max_attempts: z.number().int().min(1).max(MAX_RETRY_ATTEMPTS).optional(),
  delay_ms: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
})

/** What one node of the graph contributes to the checks across nodes and edges. */
interface CheckedNode {
  type: NodeType
  /** Its output handles (see NodeType.outputs); undefined when its parameters are invalid, so unknown. */
  outputs: string[] | null | undefined
}

/**
 * Every problem of a graph about to be saved (each item already passed `WorkflowNode` /
 * `WorkflowEdge`, or is checked for the members it needs): {@link graphIssues}, then per
 * node an unknown `type` (`['nodes', i, 'type']`), invalid parameters (`['nodes', i,
 * 'parameters', ...]`: the type's schema, and every `=` expression anywhere must compile), an
 * invalid `retry` (`['nodes', i, 'retry', ...]`) and a trigger after the first
 * (`['nodes', i, 'type']`); per edge a `source_handle` the source node does not have, or any
 * handle from a node with one unnamed output (`['edges', i, 'source_handle']`) and an edge into a
 * trigger (`['edges', i, 'target']`); each edge that closes a cycle (`['edges', i]`); and a
 * non-empty graph without a trigger (`['nodes']`). An empty graph is valid (a draft). Answers
 * every problem; empty means the graph can be saved.
 */
export function validateGraph(nodes: readonly unknown[], edges: readonly unknown[]): GraphIssue[] {
  const issues = graphIssues(nodes, edges)
  const checked = new Map<string, CheckedNode>()
  let triggers = 0
  nodes.forEach((node, index) => {
    const at: FieldPath = ['nodes', index]
    const retry = member(node, 'retry')
    if (retry !== undefined) issues.push(...zodIssues(NodeRetry.safeParse(retry).error?.issues ?? [], retry, [...at, 'retry']))
    const typeName = stringMember(node, 'type')
    if (typeName === undefined) return void issues.push({ path: [...at, 'type'], message: 'A node needs a string type' })
    const type = nodeType(typeName)
    if (!type) return void issues.push({ path: [...at, 'type'], message: `Unknown node type "${clip(typeName)}"` })
    if (type.kind === 'trigger' && ++triggers > 1) {
      issues.push({ path: [...at, 'type'], message: 'A workflow has exactly one trigger node; this is another one' })
    }
    const { issues: found, params } = checkParameters(type, member(node, 'parameters') ?? {}, [...at, 'parameters'])
    issues.push(...found)
    const id = stringMember(node, 'id')
    // A duplicate id is reported by graphIssues; edges are checked against its first node.
    if (id !== undefined && !checked.has(id)) checked.set(id, { type, outputs: found.length ? undefined : type.outputs(params) })
  })
  if (nodes.length > 0 && triggers === 0) {
    issues.push({ path: ['nodes'], message: 'A workflow needs one trigger node (webhook_trigger, manual_trigger or schedule_trigger)' })
  }
  edges.forEach((edge, index) => {
    const source = stringMember(edge, 'source')
    const target = stringMember(edge, 'target')
    const to = target === undefined ? undefined : checked.get(target)
    if (to?.type.kind === 'trigger') issues.push({ path: ['edges', index, 'target'], message: `"${clip(target ?? '')}" is a trigger: it starts the workflow, no edge leads into it` })
    const from = source === undefined ? undefined : checked.get(source)
    if (!from || from.outputs === undefined) return
    const handle = member(edge, 'source_handle') ?? null
    if (from.outputs === null) {
      if (handle !== null) issues.push({ path: ['edges', index, 'source_handle'], message: `"${clip(source ?? '')}" has one output: the edge names no source_handle` })
    } else if (typeof handle !== 'string' || !from.outputs.includes(handle)) {
      const names = from.outputs.map((name) => `"${clip(name)}"`).join(', ')
      issues.push({ path: ['edges', index, 'source_handle'], message: `source_handle must name an output of "${clip(source ?? '')}": ${names || 'it has none'}` })
    }
  })
  issues.push(...cycleIssues(nodes, edges))
  return issues
}

/**
 * The edges that close a cycle: a depth-first walk from each node in order, following edges in
 * order, reports each edge that leads back to a node on the current path (`['edges', i]`).
 * Iterative, so a long chain cannot overflow the stack.
 */
function cycleIssues(nodes: readonly unknown[], edges: readonly unknown[]): GraphIssue[] {
  const ids = nodes.map((node) => stringMember(node, 'id')).filter((id): id is string => id !== undefined)
  const known = new Set(ids)
  const outgoing = new Map<string, { target: string; index: number }[]>()
  edges.forEach((edge, index) => {
    const source = stringMember(edge, 'source')
    const target = stringMember(edge, 'target')
    if (source === undefined || target === undefined || !known.has(source) || !known.has(target)) return
    outgoing.set(source, [...(outgoing.get(source) ?? []), { target, index }])
  })
  const issues: GraphIssue[] = []
  /** Absent: not visited; `path`: on the current walk; `done`: every edge from it followed. */
  const state = new Map<string, 'path' | 'done'>()
  for (const start of ids) {
    if (state.has(start)) continue
    state.set(start, 'path')
    const stack = [{ id: start, next: 0 }]
    while (stack.length) {
      const frame = stack[stack.length - 1]
      const out = outgoing.get(frame.id) ?? []
      if (frame.next >= out.length) {
        state.set(frame.id, 'done')
        stack.pop()
        continue
      }
      const { target, index } = out[frame.next++]
      const seen = state.get(target)
      if (seen === 'path') issues.push({ path: ['edges', index], message: `This edge closes a cycle through "${clip(target)}": a workflow graph has no cycles` })
      else if (seen === undefined) {
        state.set(target, 'path')
        stack.push({ id: target, next: 0 })
      }
    }
  }
  return issues
}

/**
 * A node's parameters against its type's schema, as saved (expressions in place), plus every
 * expression anywhere in them compiling (fields of any JSON value, such as a body, are not
 * checked by the schema). Answers the issues and, when the schema accepts them, the parsed
 * parameters (for the node's output handles).
 */
function checkParameters(type: NodeType, parameters: unknown, path: FieldPath): { issues: GraphIssue[]; params?: unknown } {
  const issues: GraphIssue[] = expressionIssues(parameters, path).map((error) => ({ path: error.path, message: error.message }))
  const parsed = type.parameters.safeParse(parameters)
  if (parsed.success) return { issues, params: parsed.data }
  const reported = new Set(issues.map((issue) => JSON.stringify(issue.path)))
  for (const issue of zodIssues(parsed.error.issues, parameters, path)) {
    if (!reported.has(JSON.stringify(issue.path))) issues.push(issue)
  }
  return { issues }
}

/** The subset of a zod issue these checks read (zod's own type is a wide union). */
interface ZodIssueLike {
  code: string
  path: PropertyKey[]
  message: string
  expected?: unknown
  format?: unknown
  pattern?: unknown
  errors?: ZodIssueLike[][]
  issues?: ZodIssueLike[]
}

/**
 * Zod issues as graph issues under `base`. A failed `expr()` union (an expression or a literal)
 * is reported as the literal's own problem (`must be an http or https URL`) rather than zod's
 * "Invalid input"; an expression there was already reported when it does not compile.
 */
function zodIssues(found: readonly ZodIssueLike[], value: unknown, base: FieldPath, prefix: FieldPath = []): GraphIssue[] {
  const issues: GraphIssue[] = []
  for (const issue of found) {
    const at = [...prefix, ...issue.path.map((key) => (typeof key === 'number' ? key : String(key)))]
    if (issue.code === 'invalid_union' && issue.errors?.length) {
      const here = valueAt(value, at)
      if (isExpression(here)) continue
      const literal = issue.errors.filter((branch) => !branch.some(isExpressionFormat))
      if (literal.length === 1) {
        issues.push(...zodIssues(literal[0], value, base, at))
        continue
      }
      const expected = expectedTypes(issue)
      if (expected) {
        issues.push({ path: [...base, ...at], message: `Invalid input: expected ${alternatives([...new Set(expected)])}` })
        continue
      }
    }
    const message = issue.code === 'invalid_key' && issue.issues?.[0] ? `Invalid key: ${issue.issues[0].message}` : issue.message
    issues.push({ path: [...base, ...at], message })
  }
  return issues
}

/** The issue of an expression branch given a literal: "an expression starts with =". */
const isExpressionFormat = (issue: ZodIssueLike) => issue.code === 'invalid_format' && issue.format === 'regex' && issue.pattern === '/^=/'

/** The JSON types a union of plain types expected, or null when a branch failed on something else. */
function expectedTypes(issue: ZodIssueLike): string[] | null {
  if (issue.code === 'invalid_type' && typeof issue.expected === 'string') return [issue.expected]
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return null
  const out: string[] = []
  for (const branch of issue.errors) {
    const types = branch.length === 1 && branch[0].path.length === 0 ? expectedTypes(branch[0]) : null
    if (!types) return null
    out.push(...types)
  }
  return out
}

/** `a`, `a or b`, `a, b or c`. */
const alternatives = (names: string[]) => (names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}` : names.join(''))

/** The value at `path` inside `value`, or undefined. */
function valueAt(value: unknown, path: FieldPath): unknown {
  let current = value
  for (const key of path) {
    if (Array.isArray(current) && typeof key === 'number') current = current[key]
    else if (isRecord(current) && Object.hasOwn(current, key)) current = current[key]
    else return undefined
  }
  return current
}

/** A member of a JSON object, or undefined. */
function member(item: unknown, key: string): unknown {
  return isRecord(item) && Object.hasOwn(item, key) ? item[key] : undefined
}
