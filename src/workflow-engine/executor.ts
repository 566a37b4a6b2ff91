/**
 * Walks one workflow graph (issue 6 items 2 and 3; API.md section 7). Pure orchestration: no
 * SQL here. The engine (engine.ts) records the execution before calling {@link executeGraph} and
 * stores what it answers (`settleStatement` there).
 *
 * Order: the nodes reachable from the trigger, in topological order (ties in the order the
 * graph lists them), one at a time, so an execution is deterministic. A node runs when at least
 * one of its incoming edges is active: its source ran and, for a branching source, the edge's
 * `source_handle` is among the handles that fired. A node without an active incoming edge is
 * `skipped`, and so are the nodes below it. A node in `pin_data` is not executed: its pinned
 * output is used (`pinned`). Each node is retried per its `retry` (or its type's default) with
 * the delay doubled per attempt; parameters that do not fit the node type are not retried.
 * `settings.error_policy`: `stop` (default) ends the execution `failed` at the first failed
 * node; `continue` records the failure, passes `{error: {code, message}}` on as the node's
 * output and goes on. `settings.timeout_seconds` (else `WORKFLOW_TIMEOUT_SECONDS`) bounds the
 * whole execution.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { evaluateDeep, ExpressionError, hasExpression, type ExpressionScope } from './expressions.ts'
import { MAX_RETRY_ATTEMPTS, MAX_RETRY_DELAY_MS, validateGraph } from './graph.ts'
import { nodeType } from './node-types.ts'
import { NodeError, type GraphEdge, type GraphNode, type NodeContext, type NodeType, type WebhookResponse } from './types.ts'
import type { NodeRunStatus } from '../../entities/index.ts'

/** What one node did, as `workflow_execution_data` stores it. */
export interface NodeRun {
  position: number
  node_id: string
  node_type: string
  status: NodeRunStatus
  input: unknown
  output: unknown
  error: { code: string; message: string } | null
  branches: string[] | null
  attempts: number
  started_at: string | null
  finished_at: string | null
  duration_ms: number | null
}

/** How an execution ended. */
export interface ExecutionResult {
  status: 'succeeded' | 'failed' | 'canceled'
  output: unknown
  error: { code: string; message: string; node_id: string | null } | null
  nodes: NodeRun[]
  /** The workflow's `static_data` after the run, when a node changed it. */
  staticData: Record<string, unknown> | null
}

/** Everything an execution needs to run. */
export interface ExecutionPlan {
  execution: NodeContext['execution']
  nodes: readonly unknown[]
  edges: readonly unknown[]
  settings: Record<string, unknown>
  staticData: Record<string, unknown>
  pinData: Record<string, unknown>
  /** The trigger's input: the webhook request, the manual run's `input`, the schedule's firing. */
  triggerInput: unknown
}

/** The execution was canceled (`POST workflow-executions/{x}/cancel`). */
export class ExecutionCanceledError extends Error {
  override name = 'ExecutionCanceledError'
}

/** The execution ran past its timeout. */
export class ExecutionTimeoutError extends Error {
  override name = 'ExecutionTimeoutError'
}

/** The process is shutting down and could not wait for the execution. */
export class ExecutionInterruptedError extends Error {
  override name = 'ExecutionInterruptedError'
}

/** What the engine gives the executor besides the plan. */
export interface ExecutionHooks {
  /** Aborted on cancel (reason {@link ExecutionCanceledError}) or shutdown ({@link ExecutionInterruptedError}). */
  signal: AbortSignal
  deps: NodeContext['deps']
  resourceCtx: NodeContext['resourceCtx']
  respond: (response: WebhookResponse) => void
  /** Default timeout, in seconds, when `settings.timeout_seconds` says nothing. */
  defaultTimeoutSeconds: number
}

/** The execution timeout in seconds: `settings.timeout_seconds` when it is a positive integer, else the default. */
export function timeoutSeconds(settings: Record<string, unknown>, fallback: number): number {
  const value = settings.timeout_seconds
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback
}

/** A promise that rejects with the signal's reason once it aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason)
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
}

/** The node ids reachable from `start`, in topological order (Kahn, ties in graph order). */
function reachableOrder(nodes: GraphNode[], edges: GraphEdge[], start: string): string[] {
  const outgoing = groupBy(edges, (edge) => edge.source)
  const reachable = new Set<string>([start])
  const stack = [start]
  while (stack.length) {
    for (const edge of outgoing.get(stack.pop()!) ?? []) {
      if (!reachable.has(edge.target)) {
        reachable.add(edge.target)
        stack.push(edge.target)
      }
    }
  }
  const indegree = new Map<string, number>()
  for (const edge of edges) {
    if (reachable.has(edge.source) && reachable.has(edge.target)) indegree.set(edge.target, (indegree.get(edge.target) ?? 0) + 1)
  }
  const order: string[] = []
  const ready = nodes.filter((node) => reachable.has(node.id) && !indegree.get(node.id)).map((node) => node.id)
  const position = new Map(nodes.map((node, index) => [node.id, index]))
  while (ready.length) {
    ready.sort((a, b) => position.get(a)! - position.get(b)!)
    const id = ready.shift()!
    order.push(id)
    for (const edge of outgoing.get(id) ?? []) {
      const left = indegree.get(edge.target)! - 1
      indegree.set(edge.target, left)
      if (left === 0) ready.push(edge.target)
    }
  }
  return order
}

function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof NodeError) return { code: error.code, message: error.message }
  if (error instanceof ExpressionError) return { code: 'expression', message: error.message }
  if (error instanceof ExecutionCanceledError) return { code: 'canceled', message: error.message }
  if (error instanceof ExecutionTimeoutError) return { code: 'timeout', message: error.message }
  if (error instanceof ExecutionInterruptedError) return { code: 'interrupted', message: error.message }
  // Anything else is a defect of ours: say so without leaking internals.
  return { code: 'internal', message: 'The node failed unexpectedly' }
}

/** Zod issues as one short message naming each parameter. */
function parameterMessage(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || 'parameters'}: ${issue.message}`)
    .join('; ')
}

/** `items` grouped by `key`, each group in the order of `items`. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const item of items) {
    const group = groups.get(key(item))
    if (group) group.push(item)
    else groups.set(key(item), [item])
  }
  return groups
}

/** What an execution derives from its graph alone: a problem that stops it, or the walk. */
type GraphWalk =
  | { problem: string }
  | { problem: null; trigger: GraphNode; order: string[]; byId: Map<string, GraphNode>; incoming: Map<string, GraphEdge[]> }

/** Walks by graph (the same arrays come back while a webhook's workflow is cached). */
const walks = new WeakMap<readonly unknown[], { edges: readonly unknown[]; walk: GraphWalk }>()

/**
 * The graph validated (saved graphs were; rows older than the validation, or written around the
 * API, are not) and its walk from the trigger, computed once per graph.
 */
function walkOf(nodes: readonly unknown[], edges: readonly unknown[]): GraphWalk {
  const known = walks.get(nodes)
  if (known && known.edges === edges) return known.walk
  const walk = computeWalk(nodes, edges)
  walks.set(nodes, { edges, walk })
  return walk
}

function computeWalk(rawNodes: readonly unknown[], rawEdges: readonly unknown[]): GraphWalk {
  const issues = validateGraph(rawNodes, rawEdges)
  if (issues.length) return { problem: `${issues[0].path.join('.')}: ${issues[0].message}` }
  const nodes = rawNodes as GraphNode[]
  const edges = rawEdges as GraphEdge[]
  const trigger = nodes.find((node) => nodeType(node.type)?.kind === 'trigger')
  if (!trigger) return { problem: 'The workflow has no trigger node' }
  return {
    problem: null,
    trigger,
    order: reachableOrder(nodes, edges, trigger.id),
    byId: new Map(nodes.map((node) => [node.id, node])),
    incoming: groupBy(edges, (edge) => edge.target),
  }
}

/**
 * Runs a plan to its end. Never throws for a failing graph: failures, cancels and timeouts are in
 * the answer (a defect of ours escaping a node becomes an `internal` failure of that node).
 */
export async function executeGraph(plan: ExecutionPlan, hooks: ExecutionHooks): Promise<ExecutionResult> {
  const runs: NodeRun[] = []
  /** The execution ends at `nodeId` (or before any node) without an output. */
  const end = (status: 'failed' | 'canceled', error: { code: string; message: string }, nodeId: string | null): ExecutionResult => ({
    status,
    output: null,
    error: { ...error, node_id: nodeId },
    nodes: runs,
    staticData: null,
  })
  const walk = walkOf(plan.nodes, plan.edges)
  if (walk.problem !== null) return end('failed', { code: 'invalid_graph', message: walk.problem }, null)
  const { trigger, order, byId, incoming } = walk

  const seconds = timeoutSeconds(plan.settings, hooks.defaultTimeoutSeconds)
  const timeout = AbortSignal.timeout(seconds * 1000)
  const signal = AbortSignal.any([hooks.signal, timeout])
  const continueOnError = plan.settings.error_policy === 'continue'
  const staticData = structuredClone(plan.staticData)
  const staticBefore = JSON.stringify(staticData)

  const outputs: Record<string, unknown> = {}
  /** Handles that fired per node that ran; undefined: every edge. */
  const fired = new Map<string, string[] | undefined>()
  const scope: Omit<ExpressionScope, 'input'> = {
    nodes: outputs,
    trigger: undefined,
    static: staticData,
    execution: { uuid: plan.execution.uuid, mode: plan.execution.mode, workflow_uuid: plan.execution.workflowUuid },
  }
  let lastOutput: unknown = null
  /** Node `id` answered `output`; `branches`: the handles that fired (undefined: every edge). */
  const passOn = (id: string, output: unknown, branches?: string[]) => {
    outputs[id] = output
    fired.set(id, branches)
    if (id === trigger.id) scope.trigger = output
    lastOutput = output
  }

  const reasonOf = (): Error =>
    timeout.aborted && !hooks.signal.aborted
      ? new ExecutionTimeoutError(`The execution ran longer than its timeout of ${seconds} s`)
      : (hooks.signal.reason as Error)

  for (const id of order) {
    const node = byId.get(id)!
    const type = nodeType(node.type) as NodeType
    const position = runs.length
    let input: unknown
    if (node.id === trigger.id) input = plan.triggerInput
    else {
      const active = (incoming.get(id) ?? []).filter((edge) => {
        if (!fired.has(edge.source)) return false
        const handles = fired.get(edge.source)
        return handles === undefined || handles.includes(edge.source_handle ?? '')
      })
      if (!active.length) {
        runs.push({ ...blankRun(position, node), status: 'skipped' })
        continue
      }
      input = active.length === 1 ? outputs[active[0].source] : active.map((edge) => outputs[edge.source])
    }
    if (signal.aborted) {
      const reason = reasonOf()
      runs.push({ ...blankRun(position, node), status: 'canceled', input })
      return end(reason instanceof ExecutionCanceledError ? 'canceled' : 'failed', describeError(reason), node.id)
    }
    if (Object.hasOwn(plan.pinData, node.id)) {
      const output = plan.pinData[node.id]
      const now = new Date().toISOString()
      runs.push({ ...blankRun(position, node), status: 'pinned', input, output, started_at: now, finished_at: now, duration_ms: 0 })
      passOn(node.id, output)
      continue
    }

    const started = Date.now()
    const maxAttempts = Math.min(MAX_RETRY_ATTEMPTS, node.retry?.max_attempts ?? type.defaultRetry?.max_attempts ?? 1)
    const delayMs = Math.min(MAX_RETRY_DELAY_MS, node.retry?.delay_ms ?? type.defaultRetry?.delay_ms ?? 0)
    let attempts = 0
    let result: { output: unknown; branches?: string[] } | undefined
    let failure: unknown
    while (attempts < maxAttempts) {
      attempts++
      try {
        const raw = node.parameters ?? {}
        const evaluated = hasExpression(raw) ? await evaluateDeep(raw, { ...scope, input }, []) : raw
        const parsed = type.parameters.safeParse(evaluated)
        if (!parsed.success) throw new NodeError('invalid_parameters', parameterMessage(parsed.error), false)
        const context: NodeContext = {
          node,
          params: parsed.data,
          input,
          signal,
          execution: plan.execution,
          staticData,
          deps: hooks.deps,
          resourceCtx: hooks.resourceCtx,
          respond: hooks.respond,
        }
        result = await Promise.race([type.execute(context), aborted(signal)])
        failure = undefined
        break
      } catch (error) {
        failure = signal.aborted ? reasonOf() : error
        const retryable = !signal.aborted && !(error instanceof ExpressionError) && !(error instanceof NodeError && !error.retryable)
        if (!retryable || attempts >= maxAttempts) break
        try {
          await sleep(delayMs * 2 ** (attempts - 1), undefined, { signal })
        } catch {
          failure = reasonOf()
          break
        }
      }
    }
    const finished = Date.now()
    const timing = {
      attempts,
      started_at: new Date(started).toISOString(),
      finished_at: new Date(finished).toISOString(),
      duration_ms: finished - started,
    }
    if (result) {
      runs.push({ ...blankRun(position, node), ...timing, status: 'succeeded', input, output: result.output, branches: result.branches ?? null })
      passOn(node.id, result.output, result.branches)
      continue
    }
    const error = describeError(failure)
    // The execution itself stopped (a node's own `timeout` code is an ordinary failure).
    const stopped =
      failure instanceof ExecutionCanceledError || failure instanceof ExecutionTimeoutError || failure instanceof ExecutionInterruptedError
    const canceled = failure instanceof ExecutionCanceledError
    runs.push({ ...blankRun(position, node), ...timing, status: canceled ? 'canceled' : 'failed', input, error })
    if (stopped || !continueOnError) return end(canceled ? 'canceled' : 'failed', error, node.id)
    passOn(node.id, { error })
  }
  const changed = JSON.stringify(staticData) !== staticBefore
  return { status: 'succeeded', output: lastOutput, error: null, nodes: runs, staticData: changed ? staticData : null }
}

function blankRun(position: number, node: GraphNode): NodeRun {
  return {
    position,
    node_id: node.id,
    node_type: node.type,
    status: 'skipped',
    input: null,
    output: null,
    error: null,
    branches: null,
    attempts: 0,
    started_at: null,
    finished_at: null,
    duration_ms: null,
  }
}
