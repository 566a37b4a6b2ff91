/**
 * The shapes a run travels in between the runs service, the run manager and the executor
 * (docs/api/runs.md): its plan, its model call and its outcome.
 */
import type { ModelMessage } from 'ai'
import type { RunKind } from '../../entities/index.ts'
import type { Config } from '../platform/config.ts'
import type { Orm } from '../platform/db.ts'
import type { CacheLog } from '../platform/subscriber.ts'
import type { ResolvedModel } from '../models/index.ts'
import type { RunBus } from './run-bus.ts'
import type { ToolBinding } from '../catalog/index.ts'
import type { McpServerBinding } from './tool-mcp.ts'
import type { WorkflowToolBinding } from './workflow-tools.ts'
import type { WebSearchOffer } from '../models/index.ts'
import type { TRunWarning } from './run.schema.ts'

/** `error.code` of a run a budget stopped between its steps, or refused before it went on (docs/api/usage-and-budgets.md, "Enforcement"). */
export const BUDGET_EXCEEDED = 'budget_exceeded'

/** Everything a run needs, checked and loaded before it starts (src/runs/runs.service.ts). */
export interface RunPlan {
  /** `attempts`: the claim its executor runs under (1 from launch; src/runs/run-manager.ts, takeovers). */
  run: { id: number; uuid: string; attempts: number }
  kind: RunKind
  workspaceId: number
  userId: number
  /** The access token whose request started the run (null: the service did); with the workspace, agent and user, the scope budgets apply to. */
  accessTokenId: number | null
  /** False when no active budget covered the run at its launch: its spend then needs no threshold check (src/runs/run-manager.ts). */
  budgeted?: boolean
  agent: { id: number; uuid: string } | null
  threadId: number | null
  threadUuid: string | null
  model: ResolvedModel
  system: string | undefined
  messages: ModelMessage[]
  tools: ToolBinding[]
  /** The agent's `mcp` tools, connected when the run starts (docs/api/runs.md, "MCP tools"). */
  mcpServers?: McpServerBinding[]
  /** The agent's linked workflows the caller may run, as tools (docs/api/runs.md, "Linked workflows"). */
  workflowTools?: WorkflowToolBinding[]
  /** The provider's web search, offered as the tool `web_search` (docs/api/runs.md, "Web search"). */
  webSearch?: WebSearchOffer | null
  /** What the run could not do as the agent asks, logged as `run.warning` events first and answered on the run. */
  warnings?: TRunWarning[]
  /**
   * The agent's knowledge retrieved for the run (docs/api/knowledge.md, "In a run"): logged as
   * `knowledge.retrieved` before the answer, and stored as the answer's `citations`.
   */
  knowledge?: { event: Record<string, unknown>; citations: unknown[] }
  /** A resumed run's output and usage before it waited, which its final event adds to. */
  before?: { output: string; promptTokens: number; completionTokens: number; cost: number }
}

/**
 * What the model call of a run needs. It is known before the run is stored, so the call starts
 * while the launch statement is still under way (src/runs/runs.service.ts).
 */
export type ModelCall = Pick<
  RunPlan,
  'model' | 'system' | 'messages' | 'tools' | 'mcpServers' | 'workflowTools' | 'webSearch' | 'warnings' | 'knowledge'
> & {
  /**
   * A resumed run's calls a person decided on, or a taken-over run's calls whose result was lost:
   * they run (or are answered without running) before the model is asked again.
   */
  decided?: DecidedCall[]
  /** The run's uuid, when known before it is stored: idempotent HTTP tools derive each call's `Idempotency-Key` from it. */
  runUuid?: string
  /** The agent whose run it is (its span is `invoke_agent <name>`, src/runs/run-manager.ts); absent for prompt runs. */
  invokedAgent?: { uuid: string; name: string; version: number }
}

/** A stored message part (the wire `parts` of src/threads/message.schema.ts). */
export type Part =
  | { type: 'text'; text: string }
  | { type: 'tool-call'; tool_call_id: string; tool_name: string; input: unknown }
  | { type: 'tool-result'; tool_call_id: string; tool_name: string; output: unknown; is_error: boolean }

/** One model step of a run: its text, the calls it asked for, their results and its token counts. */
export interface Step {
  text: string
  calls: Part[]
  results: Part[]
  promptTokens: number
  completionTokens: number
}

/**
 * `runs.checkpoint` (docs/api/runs.md, "Interrupted runs"): the steps a running run has completed
 * (since it last waited), stored after each step that called tools, with `seq`, the last event
 * of those steps.
 */
export interface Checkpoint {
  seq: number
  steps: Step[]
}

/**
 * How a taken-over run goes on (src/runs/run-driver.ts): the steps it completed (its checkpoint,
 * and a step whose calls were logged before its process died), and `discardedAfter`, the last
 * event its `run.resumed` keeps: the text of a step asked again was logged after it.
 */
export interface Recovery {
  runUuid: string
  steps: Step[]
  discardedAfter: number
}

/** Which tool a call that needs approval goes to (docs/api/runs.md, "Approvals"). */
export interface ApprovalTool {
  kind: 'api' | 'mcp' | 'workflow'
  toolUuid: string | null
  workflowUuid: string | null
  /** The JSON Schema its arguments must satisfy, as the run offered it; null when unknown. */
  inputSchema: Record<string, unknown> | null
}

/** A tool call that waited for a person, decided: approved (it runs with `input`) or not (it is refused with `reason`). */
export interface DecidedCall {
  toolCallId: string
  toolName: string
  input: Record<string, unknown>
  approved: boolean
  reason: string | null
  /**
   * A taken-over run's call that was made but whose result was lost: answered as a failed result
   * saying so (the tool is not idempotent, so it is not called again).
   */
  lost?: boolean
}

/** A call the model asked for that waits for a person, as the run stores it (`run_approvals`). */
export interface PendingCall {
  uuid: string
  toolCallId: string
  toolName: string
  input: Record<string, unknown>
  tool: ApprovalTool
}

/** How a run ended. */
export interface RunOutcome {
  /**
   * `awaiting_approval`: the run stopped before calls a person must approve (it resumes as a job
   * later). `running`: this process shut down under it and handed it over; another process takes
   * it over (src/runs/run-manager.ts).
   */
  status: 'succeeded' | 'failed' | 'canceled' | 'awaiting_approval' | 'running'
  /** `upstream_error` (502), `upstream_timeout` (504), `budget_exceeded` (429), `canceled`, `interrupted` or `not_stored` (503). */
  error: { code: string; message: string } | null
  /** The final answer's text. */
  output: string
  /** Warnings the run met while it executed (`run.warning` events logged after the launch: an MCP server that could not be listed). */
  warnings?: TRunWarning[]
  /**
   * When it succeeded here: what the settle statement stored, one row per message it stored (or
   * one row without), each with the run's `RUN_FIELDS` (src/runs/run.schema.ts) columns and the message's
   * `m.`-prefixed columns (src/threads/message.schema.ts, `messageColumns`).
   */
  settledRows?: Record<string, unknown>[]
  /** The approvals a run that now waits asked for (Approval shapes, src/runs/run.schema.ts). */
  approvals?: import('./run.schema.ts').TApproval[]
  /** Whether its thread has a queued run to start next (false: none; absent: unknown). */
  queuedNext?: boolean
}

/**
 * What every claim statement of a stored run answers about it (src/runs/run-driver.ts resumes and
 * dispatches, src/runs/run-takeover.ts takes over): ids as numbers, its input as text, its output
 * and usage so far, its last event and its claim.
 */
export interface ClaimedRunRow {
  id: number
  uuid: string
  kind: RunKind
  user_id: number
  workspace_id: number
  agent_id: number | null
  /** The agent's version the run uses (null: a run stored before versions, which runs the agent as it is now). */
  agent_version: number | null
  access_token_id: number | null
  thread_id: number | null
  thread_uuid: string | null
  /** An agent or thread run's input as text (its message). */
  input_text: string
  output: string | null
  prompt_tokens: number
  completion_tokens: number
  cost: string | number
  events_count: number
  attempts: number
}

/** A claimed run's output and usage before this execution (`RunPlan.before`). */
export function storedBefore(row: ClaimedRunRow): NonNullable<RunPlan['before']> {
  return {
    output: row.output ?? '',
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cost: Number(row.cost),
  }
}

/**
 * The plan of a claimed run going on here with `call` as `agent` (null for a prompt run); `before`
 * when what it stored before this execution adds to its final event ({@link storedBefore}).
 */
export function claimedPlan(call: ModelCall, row: ClaimedRunRow, agent: RunPlan['agent'], before?: RunPlan['before']): RunPlan {
  return {
    ...call,
    run: { id: Number(row.id), uuid: row.uuid, attempts: Number(row.attempts) },
    kind: row.kind,
    workspaceId: Number(row.workspace_id),
    userId: Number(row.user_id),
    accessTokenId: row.access_token_id === null ? null : Number(row.access_token_id),
    agent,
    threadId: row.thread_id === null ? null : Number(row.thread_id),
    threadUuid: row.thread_uuid,
    ...(before ? { before } : {}),
  }
}

/** How the run manager's sweep asks for takeovers (src/runs/run-takeover.ts). */
export interface TakeoverRequest {
  /** Seconds without a heartbeat after which a run's process counts as dead. */
  staleSeconds: number
  /** Runs executing in the asking process (never taken over by it). */
  own: number[]
  /** Runs claimed this many times are not taken over again (the sweep fails them). */
  maxAttempts: number
  /** Runs claimed per call at most. */
  limit: number
}

/** What the executor needs from the process. */
export interface ExecutorDeps {
  orm: Orm
  config: Config
  bus: RunBus
  log: CacheLog
}
