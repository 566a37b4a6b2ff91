/**
 * The contracts of the workflow engine (docs/api/workflows.md): what a node type is, what it
 * receives when it runs and what it answers. Node types live in src/workflows/nodes, the
 * executor that walks a graph in src/workflows/executor.ts.
 *
 * Data model: every node answers one JSON value, its `output`. A node's `input` is the output of
 * the node its active incoming edge comes from; with several active incoming edges (a merge), an
 * array of those outputs in edge order. A trigger's input is what triggered it (the webhook's
 * request, the manual run's `input`, the schedule's firing). Parameter strings that start with
 * `=` are JSONata expressions over the input (src/workflows/expressions.ts), evaluated
 * before the node's parameter schema parses the result.
 *
 * Nodes that act on the service's resources (run a prompt or an agent, apply an account's
 * credentials) do so through {@link WorkflowServices}, a port the runtime hands to the engine
 * (src/workflows/workflow-node-services.ts implements it): the engine imports no service.
 */
import type { z } from 'zod'
import type { ExecutionMode } from '../../entities/index.ts'
import type { Credential } from '../catalog/index.ts'
import type { Config } from '../platform/config.ts'
import type { Orm } from '../platform/db.ts'
import type { TRunAgentInput, TRunPromptInput, TRunResult } from '../runs/index.ts'
import type { Logger } from '../platform/logger.ts'

/** A node of a stored graph, as the executor reads it (the request shape is `WorkflowNode` in graph.ts). */
export interface GraphNode {
  id: string
  type: string
  name?: string
  parameters?: Record<string, unknown>
  /** Per-node retry (docs/api/workflows.md): attempts in all (1..10) and the first delay, doubled per attempt. */
  retry?: { max_attempts?: number; delay_ms?: number }
  [key: string]: unknown
}

/** An edge of a stored graph. `source_handle` names the output of a branching node (`true`, `false`, a switch case). */
export interface GraphEdge {
  id?: string
  source: string
  target: string
  source_handle?: string | null
  target_handle?: string | null
}

/** The response a `respond_to_webhook` node sends to the waiting webhook caller. */
export interface WebhookResponse {
  /** HTTP status, 100..599. */
  status: number
  headers: Record<string, string>
  /** A JSON value (sent as JSON) or a string (sent as text unless a content-type header says otherwise). */
  body: unknown
}

/** What the executor gives a node when it runs it. */
export interface NodeContext<P = unknown> {
  node: GraphNode
  /** Parameters with every expression evaluated, parsed by the node type's schema. */
  params: P
  /** The incoming value (see the module comment). */
  input: unknown
  /** Aborted when the execution is canceled or times out: stop waiting and throw. */
  signal: AbortSignal
  execution: {
    id: number
    uuid: string
    mode: ExecutionMode
    workflowId: number
    workflowUuid: string
    workspaceId: number
    /** The triggering user (the workflow's owner for webhooks and schedules). */
    userId: number
    /**
     * How many agent runs calling a linked workflow led to this execution (0 or absent: none); a
     * run it starts offers linked workflows only below a limit (./linked-workflows.ts).
     */
    toolDepth?: number
  }
  /**
   * The workflow's `static_data`. For a node whose type changes it ({@link NodeType.changesStaticData}):
   * the value stored now, read with the workflow row locked, which the node may alter; what it leaves
   * here is stored as the node ends, before the lock is released (src/workflows/static-data.ts).
   * For any other node: the execution's view (as read when it started, or as its last write left
   * it), read-only.
   */
  staticData: Record<string, unknown>
  deps: EngineDeps
  /** What nodes call on the services (run prompt, run agent, accounts of an HTTP request), as {@link actor}. */
  services: WorkflowServices
  /** The execution's user in the workflow's workspace: who the calls on {@link services} act as. */
  actor: Actor
  /** Answers the waiting webhook caller (only the first call counts; a no-op when nobody waits). */
  respond(response: WebhookResponse): void
}

/** What a node answers. */
export interface NodeResult {
  output: unknown
  /**
   * The output handles that fire, for branching nodes (`['true']`, `['case_a', 'case_b']`); omitted:
   * every outgoing edge fires. Edges whose `source_handle` is not among them are not taken, and a
   * node whose incoming edges are all not taken is skipped.
   */
  branches?: string[]
}

/** A node failed; `code` is stable (`http_status`, `timeout`, `invalid_parameters`, ...), the message safe to show. */
export class NodeError extends Error {
  override name = 'NodeError'
  constructor(
    readonly code: string,
    message: string,
    /** False for failures a retry cannot fix (bad parameters): the executor does not retry them. */
    readonly retryable = true,
  ) {
    super(message)
  }
}

/** Long-lived dependencies the nodes may use. */
export interface EngineDeps {
  orm: Orm
  config: Config
  log: Logger
}

/**
 * Who an execution acts as: its user (the caller of a manual run or retry, the workflow's owner
 * for webhooks and schedules) in the workflow's workspace, with that user's current role there.
 */
export interface Actor {
  userId: number
  workspaceId: number
}

/** An account as the `http_request` node may apply it (see {@link WorkflowServices.accountCredential}). */
export type AccountCredentialAnswer =
  /** The actor may not use such an account in the workspace: unknown, not visible, or another workspace's. */
  | { usable: false }
  /** `credential` is null when the account's provider uses the `none` scheme or the account holds no secret. */
  | { usable: true; credential: Credential | null }

/**
 * What nodes call on the service (the runtime hands an implementation to the engine, see
 * `WorkflowEngine.bind`). Every call acts as `actor` and passes the same access checks a request
 * of that user in that workspace would, with read and write abilities. Errors are the services'
 * named errors (src/platform/errors.ts); each call throws NotFoundError when the actor's user is
 * no longer a member of the workspace (or either is gone).
 */
export interface WorkflowServices {
  /**
   * Runs a prompt (`POST /api/v1/prompts/{prompt_uuid}/run` with `background: false`) and waits
   * for its end; `signal` aborting cancels the run (it ends `canceled`).
   * @throws NotFoundError, ForbiddenError, ValidationError, UpstreamError, UpstreamTimeoutError,
   *   TooManyRequestsError, or another AppError, as the run service does.
   */
  runPrompt(actor: Actor, input: TRunPromptInput, signal: AbortSignal): Promise<TRunResult>
  /**
   * Sends a message to an agent (`POST /api/v1/agents/{agent_uuid}/run` with `background:
   * false`, in a new thread or `thread_uuid`) and waits for its answer; `signal` as {@link runPrompt};
   * `o.toolDepth` the {@link NodeContext} execution's `toolDepth`.
   * @throws as {@link runPrompt}.
   */
  runAgent(actor: Actor, input: TRunAgentInput, signal: AbortSignal, o?: { toolDepth?: number }): Promise<TRunResult>
  /**
   * The opened credential of account `accountUuid`, when the actor may use it in the workspace
   * (SERVER-ONLY: the secret never goes into an output, a log line or an error).
   * @throws SecretUnavailableError (src/platform/secrets.ts) when its secret cannot be opened
   *   (its key is not configured).
   */
  accountCredential(actor: Actor, accountUuid: string): Promise<AccountCredentialAnswer>
}

/** One kind of node (`GET /api/v1/workflow-node-types` lists them). */
// `any` by default: the registry holds node types of different parameter shapes, and `execute`
// takes its parameters contravariantly, so no single concrete type (not `unknown`) fits them all.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface NodeType<P = any> {
  /** The `type` written in a node (`webhook_trigger`, `http_request`, ...). */
  type: string
  /** Human name and one-sentence description for editors. */
  label: string
  description: string
  /** `trigger` nodes start a graph (exactly one per graph); the others act on their input. */
  kind: 'trigger' | 'action'
  /**
   * The parameters, checked on save (with expressions in place: fields that accept them are
   * written with `expr()` from expressions.ts) and again at run time after evaluation.
   */
  parameters: z.ZodType<P>
  /**
   * The output handles edges may name in `source_handle`, for these (saved) parameters; null: one
   * unnamed output, and edges leaving the node must not name a handle.
   */
  outputs(params: P): string[] | null
  /**
   * True when a node of this type with these saved parameters (expressions in place) may change the
   * workflow's `static_data`: the executor then evaluates its parameters and executes it inside a
   * short transaction that holds the workflow row's lock, against the static data stored now, and
   * stores what the node leaves in {@link NodeContext.staticData} before releasing it. Such a type
   * should be {@link instant}: it runs while the row is locked. Omitted: never.
   */
  changesStaticData?(parameters: Record<string, unknown>): boolean
  /** Default retry of this type when the node sets none (the HTTP request retries; the others do not). */
  defaultRetry?: { max_attempts: number; delay_ms: number }
  /**
   * True when `execute` never waits for I/O or time (it answers from its input alone): the executor
   * then does not race it against a cancel or timeout, which cannot happen while it runs.
   */
  instant?: boolean
  execute(context: NodeContext<P>): Promise<NodeResult>
}
