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

/** Everything a run needs, checked and loaded before it starts (src/runs/runs.service.ts). */
export interface RunPlan {
  run: { id: number; uuid: string }
  kind: RunKind
  workspaceId: number
  userId: number
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
}

/**
 * What the model call of a run needs. It is known before the run is stored, so the call starts
 * while the launch statement is still under way (src/runs/runs.service.ts).
 */
export type ModelCall = Pick<RunPlan, 'model' | 'system' | 'messages' | 'tools' | 'mcpServers' | 'workflowTools' | 'webSearch' | 'warnings' | 'knowledge'>

/** How a run ended. */
export interface RunOutcome {
  status: 'succeeded' | 'failed' | 'canceled'
  /** `upstream_error` (502), `upstream_timeout` (504), `canceled`, `interrupted` or `internal_error`. */
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
}

/** What the executor needs from the process. */
export interface ExecutorDeps {
  orm: Orm
  config: Config
  bus: RunBus
  log: CacheLog
}
