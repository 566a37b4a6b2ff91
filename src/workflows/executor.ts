/**
 * Walks one workflow graph (docs/api/workflows.md). Pure orchestration: no
 * SQL here. The engine (engine.ts) records the execution before calling {@link executeGraph} and
 * stores what it answers (`ExecutionStore.settle`, store.ts).
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
 * whole execution (a resumed one: from its resumption). A resumed execution ({@link Checkpoint})
 * records its finished nodes as they were and runs the rest.
 *
 * Static data: a node whose type changes it (the `set` node with `static_data`) is evaluated and
 * executed through {@link ExecutionHooks.changeStaticData}, over the workflow's static data as
 * stored now and with its row locked; its write is stored as it ends. The other nodes read the
 * execution's view, `$static`: the static data the execution started with, replaced by what each
 * of its own writes stored (a resumed execution: the view its checkpoint kept; its finished nodes'
 * writes were stored as they ran, and a resumption writes nothing back).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { evaluateDeep, ExpressionError, hasExpression, type ExpressionScope } from './expressions.ts'
import { MAX_RETRY_ATTEMPTS, MAX_RETRY_DELAY_MS, validateGraph } from './graph.ts'
import { nodeType, triggerOf } from './node-types.ts'
import {
  NodeError,
  type Actor,
  type GraphEdge,
  type GraphNode,
  type NodeContext,
  type NodeResult,
  type NodeType,
  type WebhookResponse,
} from './types.ts'
import type { NodeRunStatus } from '../../entities/index.ts'
import type { StaticDataChanger } from './static-data.ts'
import { inSpan, markSpanFailed, tracingEnabled } from '../platform/tracing.ts'

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

/**
 * What an interrupted execution resumes from (`settings.on_interrupt: resume`, docs/api/workflows.md):
 * the runs of the nodes that finished, in the order they ran (a prefix of the walk), and the
 * execution's view of the static data (`$static`) as they left it (their writes are already stored).
 */
export interface Checkpoint {
  nodes: NodeRun[]
  static_data: Record<string, unknown>
}

/** How an execution ended. */
export interface ExecutionResult {
  status: 'succeeded' | 'failed' | 'canceled'
  output: unknown
  error: { code: string; message: string; node_id: string | null } | null
  nodes: NodeRun[]
  /**
   * Set when its process stopped it ({@link ExecutionInterruptedError}): what it would resume
   * from (the node that was running is not in it: it runs again).
   */
  progress?: Checkpoint
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
  /** Where an interrupted execution resumes: its finished nodes are not run again. */
  resume?: Checkpoint | null
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
  /** What nodes call on the services (handed to the engine by the runtime). */
  services: NodeContext['services']
  respond: (response: WebhookResponse) => void
  /**
   * Runs a change of the workflow's static data with its row locked, over the value stored now,
   * and stores it (src/workflows/static-data.ts).
   */
  changeStaticData: StaticDataChanger
  /** Default timeout, in seconds, when `settings.timeout_seconds` says nothing. */
  defaultTimeoutSeconds: number
  /**
   * Called after each node that ran while the execution goes on, with what it would resume from
   * (the arrays are the executor's own: copy or serialize them before returning).
   */
  onProgress?: (checkpoint: Checkpoint) => void
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
  const trigger = triggerOf(nodes)
  if (!trigger) return { problem: 'The workflow has no trigger node' }
  return {
    problem: null,
    trigger,
    order: reachableOrder(nodes, edges, trigger.id),
    byId: new Map(nodes.map((node) => [node.id, node])),
    incoming: groupBy(edges, (edge) => edge.target),
  }
}

/** The state of one execution while it runs (a class, not closures: one allocation per execution, no per-run functions). */
class Execution {
  readonly runs: NodeRun[] = []
  readonly outputs: Record<string, unknown> = {}
  /** Handles that fired per node that ran; undefined: every edge. */
  readonly fired = new Map<string, string[] | undefined>()
  lastOutput: unknown = null
  /** Aborted on the hooks' signal (cancel, shutdown) or at the timeout; its reason is the first of them. */
  readonly controller = new AbortController()
  #abortedPromise: Promise<never> | undefined

  constructor(
    readonly hooks: ExecutionHooks,
    readonly seconds: number,
    readonly scope: Omit<ExpressionScope, 'input'>,
    readonly triggerId: string,
    /** Who the nodes' service calls act as: the execution's user in the workflow's workspace. */
    readonly actor: Actor,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Rejects once the execution is aborted; one promise per execution, raced by every node that waits. */
  get abortedPromise(): Promise<never> {
    return (this.#abortedPromise ??= aborted(this.signal))
  }

  /** The reason the execution stopped: its timeout, or the hooks' reason (cancel, shutdown). */
  reason(): Error {
    return this.controller.signal.reason as Error
  }

  /** Node `id` answered `output`; `branches`: the handles that fired (undefined: every edge). */
  passOn(id: string, output: unknown, branches?: string[]): void {
    this.outputs[id] = output
    this.fired.set(id, branches)
    if (id === this.triggerId) this.scope.trigger = output
    this.lastOutput = output
  }

  /**
   * The execution ends at `nodeId` (whose run is the last one recorded) without an output; when its
   * process stopped it, with what it would resume from.
   */
  end(status: 'failed' | 'canceled', error: { code: string; message: string }, nodeId: string | null): ExecutionResult {
    const result: ExecutionResult = { status, output: null, error: { ...error, node_id: nodeId }, nodes: this.runs }
    if (this.controller.signal.reason instanceof ExecutionInterruptedError) {
      result.progress = { nodes: this.runs.slice(0, -1), static_data: this.scope.static }
    }
    return result
  }

  /**
   * Records the runs of a checkpoint's nodes as they were and passes their outputs on; answers
   * false when they are not the first nodes of `order` (the graph changed since).
   */
  replay(checkpoint: Checkpoint, order: string[]): boolean {
    for (const [index, run] of checkpoint.nodes.entries()) {
      if (run.node_id !== order[index] || run.position !== index || run.status === 'canceled') return false
      this.runs.push(run)
      if (run.status === 'failed') this.passOn(run.node_id, { error: run.error })
      else if (run.status !== 'skipped') this.passOn(run.node_id, run.output, run.branches ?? undefined)
    }
    return true
  }
}

/** Ends `execution` when `signal` aborts (cancel, shutdown); see {@link executeGraph}. */
function follow(execution: Execution): () => void {
  const { hooks, controller } = execution
  const onAbort = () => controller.abort(hooks.signal.reason)
  if (hooks.signal.aborted) onAbort()
  else hooks.signal.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(
    () => controller.abort(new ExecutionTimeoutError(`The execution ran longer than its timeout of ${execution.seconds} s`)),
    execution.seconds * 1000,
  )
  return () => {
    clearTimeout(timer)
    hooks.signal.removeEventListener('abort', onAbort)
  }
}

/** The input of node `id` from its active incoming edges, or undefined when none is active (the node is skipped). */
function inputOf(execution: Execution, incoming: GraphEdge[] | undefined): { value: unknown } | undefined {
  let first: GraphEdge | undefined
  let several: unknown[] | undefined
  for (const edge of incoming ?? []) {
    if (!execution.fired.has(edge.source)) continue
    const handles = execution.fired.get(edge.source)
    if (handles !== undefined && !handles.includes(edge.source_handle ?? '')) continue
    if (!first) first = edge
    else (several ??= [execution.outputs[first.source]]).push(execution.outputs[edge.source])
  }
  if (!first) return undefined
  return { value: several ?? execution.outputs[first.source] }
}

/**
 * Runs a plan to its end. Never throws for a failing graph: failures, cancels and timeouts are in
 * the answer (a defect of ours escaping a node becomes an `internal` failure of that node).
 */
export async function executeGraph(plan: ExecutionPlan, hooks: ExecutionHooks): Promise<ExecutionResult> {
  const walk = walkOf(plan.nodes, plan.edges)
  if (walk.problem !== null) {
    return {
      status: 'failed',
      output: null,
      error: { code: 'invalid_graph', message: walk.problem, node_id: null },
      nodes: [],
    }
  }
  const { trigger, order, byId, incoming } = walk
  // Most workflows keep no static data: nothing to copy then. (A copy: the plan's may be shared
  // with other executions, through the webhook cache.) A resumed execution goes on with the view
  // its checkpoint kept (its finished nodes' writes are already stored: nothing is written back).
  const staticStart = plan.resume?.static_data ?? plan.staticData
  const staticData: Record<string, unknown> = isEmpty(staticStart) ? {} : structuredClone(staticStart)
  const scope: Omit<ExpressionScope, 'input'> = {
    nodes: {},
    trigger: undefined,
    static: staticData,
    execution: { uuid: plan.execution.uuid, mode: plan.execution.mode, workflow_uuid: plan.execution.workflowUuid },
  }
  const actor: Actor = { userId: plan.execution.userId, workspaceId: plan.execution.workspaceId }
  const execution = new Execution(hooks, timeoutSeconds(plan.settings, hooks.defaultTimeoutSeconds), scope, trigger.id, actor)
  scope.nodes = execution.outputs
  if (plan.resume && !execution.replay(plan.resume, order)) {
    const error = { code: 'interrupted', message: 'The workflow changed while the execution was interrupted: it cannot resume' }
    return { status: 'failed', output: null, error: { ...error, node_id: null }, nodes: [] }
  }
  const stop = follow(execution)
  try {
    for (let index = execution.runs.length; index < order.length; index++) {
      const id = order[index]
      const input = id === trigger.id ? { value: plan.triggerInput } : inputOf(execution, incoming.get(id))
      const node = byId.get(id)!
      const ended = await nodeSpan(node, execution, () => runNode(execution, plan, node, input))
      if (ended) return ended
      const status = execution.runs.at(-1)!.status
      // The view as it is now: a node that changed static data replaced scope.static with what it stored.
      if (hooks.onProgress && (status === 'succeeded' || status === 'failed')) hooks.onProgress({ nodes: execution.runs, static_data: execution.scope.static })
    }
  } finally {
    stop()
  }
  return { status: 'succeeded', output: execution.lastOutput, error: null, nodes: execution.runs }
}

/**
 * Runs `run` (one node, with its retries) inside a `workflow_node <node id>` span, a child of its
 * execution's (docs/operations.md, "Traces"): the node's type and how it ended as attributes, a
 * failed node marks it failed with its error code. As it is while tracing is off.
 */
function nodeSpan(node: GraphNode, execution: Execution, run: () => Promise<ExecutionResult | undefined>): Promise<ExecutionResult | undefined> {
  if (!tracingEnabled()) return run()
  return inSpan(`workflow_node ${node.id}`, { attributes: { 'workflow.node.id': node.id, 'workflow.node.type': node.type } }, async (span) => {
    const ended = await run()
    const last = execution.runs.at(-1)
    if (last?.node_id === node.id) {
      span.setAttribute('workflow.node.status', last.status)
      if (last.status === 'failed') markSpanFailed(span, last.error?.code ?? 'failed', last.error?.message)
    }
    return ended
  })
}

/** True for an object without own enumerable members. */
function isEmpty(record: Record<string, unknown>): boolean {
  for (const _ in record) return false
  return true
}

/**
 * Runs one node (with its retries) and records it; answers how the execution ended when it ends
 * here, else undefined. `input` undefined: no incoming edge is active, the node is skipped.
 */
async function runNode(
  execution: Execution,
  plan: ExecutionPlan,
  node: GraphNode,
  input: { value: unknown } | undefined,
): Promise<ExecutionResult | undefined> {
  const { runs, signal } = execution
  const position = runs.length
  if (!input) {
    runs.push(blankRun(position, node, 'skipped', null))
    return undefined
  }
  if (signal.aborted) {
    const reason = execution.reason()
    runs.push(blankRun(position, node, 'canceled', input.value))
    return execution.end(reason instanceof ExecutionCanceledError ? 'canceled' : 'failed', describeError(reason), node.id)
  }
  if (Object.hasOwn(plan.pinData, node.id)) {
    runPinned(execution, plan, node, position, input.value)
    return undefined
  }
  const started = Date.now()
  const attempts = await attemptNode(execution, plan, node, input.value)
  return recordAttempts(execution, plan, node, { position, input: input.value, started }, attempts)
}

/** Records pinned node `node` (in `pin_data`): not executed, its pinned output passed on. */
function runPinned(execution: Execution, plan: ExecutionPlan, node: GraphNode, position: number, input: unknown): void {
  const output = plan.pinData[node.id]
  const now = new Date().toISOString()
  const run = blankRun(position, node, 'pinned', input)
  run.output = output
  run.started_at = now
  run.finished_at = now
  run.duration_ms = 0
  execution.runs.push(run)
  execution.passOn(node.id, output)
}

/** How a node's attempts went: its result, or (result undefined) the failure that ended them. */
interface Attempts {
  count: number
  result: NodeResult | undefined
  failure: unknown
}

/**
 * Runs `node` until an attempt succeeds, a failure is not retryable (bad parameters, an
 * expression, a NodeError that says so, the execution's end) or its retries are spent, waiting
 * its delay doubled per attempt in between.
 */
async function attemptNode(execution: Execution, plan: ExecutionPlan, node: GraphNode, input: unknown): Promise<Attempts> {
  const { signal } = execution
  const type = nodeType(node.type) as NodeType
  const maxAttempts = Math.min(MAX_RETRY_ATTEMPTS, node.retry?.max_attempts ?? type.defaultRetry?.max_attempts ?? 1)
  const delayMs = Math.min(MAX_RETRY_DELAY_MS, node.retry?.delay_ms ?? type.defaultRetry?.delay_ms ?? 0)
  let count = 0
  let failure: unknown
  while (count < maxAttempts) {
    count++
    try {
      return { count, result: await executeOnce(execution, plan, node, type, input), failure: undefined }
    } catch (error) {
      failure = signal.aborted ? execution.reason() : error
      const retryable = !signal.aborted && !(error instanceof ExpressionError) && !(error instanceof NodeError && !error.retryable)
      if (!retryable || count >= maxAttempts) break
      try {
        await sleep(delayMs * 2 ** (count - 1), undefined, { signal })
      } catch {
        failure = execution.reason()
        break
      }
    }
  }
  return { count, result: undefined, failure }
}

/**
 * One attempt of `node`: its parameters evaluated over `input` and parsed by its type, then
 * executed; for a node that changes static data, both inside the static data's transaction
 * (see the module comment), which writes nothing once the execution has ended.
 * @throws NodeError `invalid_parameters`, an ExpressionError, what the node throws, or what
 *   {@link ExecutionHooks.changeStaticData} throws.
 */
async function executeOnce(
  execution: Execution,
  plan: ExecutionPlan,
  node: GraphNode,
  type: NodeType,
  input: unknown,
): Promise<NodeResult> {
  const raw = node.parameters ?? {}
  if (!type.changesStaticData?.(raw)) return evaluateAndExecute(execution, plan, node, type, input)
  const changed = await execution.hooks.changeStaticData(plan.execution.workflowId, (current) => {
    // The execution ended (cancel, timeout, shutdown) while this waited for the lock.
    if (execution.signal.aborted) throw execution.reason()
    return evaluateAndExecute(execution, plan, node, type, input, current)
  })
  execution.scope.static = changed.staticData
  return changed.value
}

/**
 * {@link executeOnce} itself. `locked`: the static data stored now, read with the workflow row
 * locked, which `$static` and the node then see (and the node may alter); omitted, the execution's
 * view.
 */
async function evaluateAndExecute(
  execution: Execution,
  plan: ExecutionPlan,
  node: GraphNode,
  type: NodeType,
  input: unknown,
  locked?: Record<string, unknown>,
): Promise<NodeResult> {
  const { hooks, signal } = execution
  const staticData = locked ?? execution.scope.static
  const raw = node.parameters ?? {}
  const evaluated = hasExpression(raw) ? await evaluateDeep(raw, { ...execution.scope, static: staticData, input }, []) : raw
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
    services: hooks.services,
    actor: execution.actor,
    respond: hooks.respond,
  }
  // A node that waits races the execution's end; an instant one cannot be overtaken by it, and one
  // that changes static data is not (its transaction is short, and it must end before the lock does).
  return type.instant || locked
    ? await type.execute(context)
    : await Promise.race([type.execute(context), execution.abortedPromise])
}

/**
 * Records how a node's attempts went and passes its output on; answers how the execution ended
 * when it ends here (the node failed under `error_policy` `stop`, or the execution stopped).
 */
function recordAttempts(
  execution: Execution,
  plan: ExecutionPlan,
  node: GraphNode,
  at: { position: number; input: unknown; started: number },
  { count, result, failure }: Attempts,
): ExecutionResult | undefined {
  const finished = Date.now()
  const run = blankRun(at.position, node, 'succeeded', at.input)
  run.attempts = count
  run.started_at = new Date(at.started).toISOString()
  run.finished_at = new Date(finished).toISOString()
  run.duration_ms = finished - at.started
  if (result) {
    run.output = result.output
    run.branches = result.branches ?? null
    execution.runs.push(run)
    execution.passOn(node.id, result.output, result.branches)
    return undefined
  }
  const error = describeError(failure)
  // The execution itself stopped (a node's own `timeout` code is an ordinary failure).
  const stopped =
    failure instanceof ExecutionCanceledError || failure instanceof ExecutionTimeoutError || failure instanceof ExecutionInterruptedError
  const canceled = failure instanceof ExecutionCanceledError
  run.status = canceled ? 'canceled' : 'failed'
  run.error = error
  execution.runs.push(run)
  if (stopped || plan.settings.error_policy !== 'continue') return execution.end(canceled ? 'canceled' : 'failed', error, node.id)
  execution.passOn(node.id, { error })
  return undefined
}

function blankRun(position: number, node: GraphNode, status: NodeRunStatus, input: unknown): NodeRun {
  return {
    position,
    node_id: node.id,
    node_type: node.type,
    status,
    input,
    output: null,
    error: null,
    branches: null,
    attempts: 0,
    started_at: null,
    finished_at: null,
    duration_ms: null,
  }
}
