/**
 * An agent's linked workflows as tools of its runs (docs/api/runs.md, "Linked workflows"): what
 * the model is offered for each one, and the AI SDK tools that run them.
 *
 * The run executor knows no service, so each binding carries its own `run`, made by the runs
 * capability (src/workflows/linked-workflows.ts): one call is one ordinary workflow execution,
 * stored and visible like a manual run. What this module adds is the tool's side: the input is
 * checked against the binding's schema before anything runs, a succeeded execution's output is
 * the tool result, anything else becomes a failed tool result naming the execution (the run
 * goes on), and the run's signal stops the execution.
 */
import type { ToolSet } from 'ai'
import { objectTool } from '../catalog/index.ts'

/** How one workflow tool call ended. `executionUuid` is null when no execution could be stored. */
export interface WorkflowToolOutcome {
  executionUuid: string | null
  /** The execution's final status (`succeeded`, `failed`, `canceled`, `queued` when handed over at shutdown), or `not_started`. */
  status: string
  /** The execution's final output (null unless it succeeded). */
  output: unknown
  /** Why it did not succeed (`{code, message}` of the execution, or of the refusal to start it). */
  error: { code: string; message: string } | null
}

/** One linked workflow as a tool of a run. */
export interface WorkflowToolBinding {
  /** Function name for the model, unique among the run's tools, `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string
  description: string
  /** A JSON-Schema object the arguments must satisfy (free-form when the trigger declares nothing). */
  inputSchema: Record<string, unknown>
  workflowUuid: string
  /** Every call waits for a person's approval (the workflow's `settings.requires_approval`, docs/api/runs.md, "Approvals"). */
  requiresApproval: boolean
  /**
   * Runs one execution with the call's arguments and waits for its end; `signal` aborting cancels
   * it (it ends `canceled`). Never throws: failures are outcomes.
   */
  run(input: Record<string, unknown>, signal: AbortSignal | undefined): Promise<WorkflowToolOutcome>
}

/** Which execution a workflow tool call made: the run's `tool.result` event carries it. */
export interface WorkflowLink {
  workflow_uuid: string
  execution_uuid: string | null
}

/** The {@link WorkflowLink} of each workflow tool call of a run, by tool call id. */
export type WorkflowCallLinks = Map<string, WorkflowLink>

/** The message of the error a failed call gives the model: the execution, its status and its reason. */
export function workflowFailureText(outcome: WorkflowToolOutcome): string {
  const reason = outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : 'no reason given'
  if (!outcome.executionUuid) return `The workflow could not be started (${reason})`
  return `Workflow execution ${outcome.executionUuid} ended ${outcome.status} (${reason})`
}

/**
 * AI SDK tools for `streamText`, keyed by {@link WorkflowToolBinding.name}. A succeeded execution
 * answers its output; any other end throws an Error ({@link workflowFailureText}), which the SDK
 * turns into a failed tool result for the model's next step. Each call's execution is recorded
 * in `links` under the tool call id.
 */
export function toWorkflowToolSet(bindings: WorkflowToolBinding[], o: { signal?: AbortSignal; links: WorkflowCallLinks }): ToolSet {
  const tools: ToolSet = {}
  for (const binding of bindings) {
    tools[binding.name] = objectTool(binding, o.signal, async (input, signal, toolCallId) => {
      const outcome = await binding.run(input, signal)
      o.links.set(toolCallId, { workflow_uuid: binding.workflowUuid, execution_uuid: outcome.executionUuid })
      if (outcome.status !== 'succeeded') throw new Error(workflowFailureText(outcome))
      return outcome.output
    })
  }
  return tools
}
