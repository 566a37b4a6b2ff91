/**
 * The model's side of a run (docs/api/runs.md): the parts
 * of its answer as the run executor records them, from the Vercel AI SDK.
 *
 * A run whose model is offered tools goes through `streamText`, which runs the tool loop: it
 * executes each tool call ({@link toToolSet}, {@link toWorkflowToolSet}, an MCP server's tools
 * through ./tool-mcp.ts, connected first and closed at the end; a provider's web search
 * runs at the provider), sends the results back and calls the model again,
 * at most `LLM_MAX_STEPS` times. A run without tools has no loop, so it makes its one model call
 * through the SDK's `experimental_streamLanguageModelCall`: the same prompt conversion, provider
 * call and stream parsing that `streamText` runs for each step, without the multi-step
 * machinery around it. On this machine that saves about 1.3 ms of CPU per run (docs/benchmarks.md,
 * "Runs benchmark").
 *
 * A tool that needs a person's approval (docs/api/runs.md, "Approvals") is offered with the AI
 * SDK's `needsApproval`: the SDK does not execute its calls but answers an approval request for
 * each, runs the step's other calls, and ends the loop. A resumed run's call carries the decided
 * calls (`decided`): they run (or are refused) first, as a step of their own, and the model is
 * asked again with their results.
 */
import { createHash } from 'node:crypto'
import {
  experimental_streamLanguageModelCall,
  stepCountIs,
  streamText,
  type ModelMessage,
  type TextStreamPart,
  type ToolResultPart,
  type ToolSet,
} from 'ai'
import type { JSONValue } from '@ai-sdk/provider'
import { isRecord } from '../access/wire.ts'
import type { Config } from '../platform/config.ts'
import type { TRunWarning } from './run.schema.ts'
import type { ApprovalTool, DecidedCall, ModelCall } from './run-types.ts'
import { openMcpTools, type McpSession } from './tool-mcp.ts'
import { countModelPart } from './run-metrics.ts'
import { toToolSet } from '../catalog/index.ts'
import { toWorkflowToolSet, type WorkflowCallLinks, type WorkflowLink } from './workflow-tools.ts'
import { modelCallTracing } from '../models/index.ts'
import { captureMessageContent, inSpan, tracingEnabled } from '../platform/tracing.ts'
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
} from '@opentelemetry/semantic-conventions/incubating'

/** One part of a model's answer, as the run executor records it. */
export type ModelPart =
  | { type: 'text'; text: string }
  /** `providerExecuted`: a tool the provider ran itself (its web search), not one the run executed. */
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown; providerExecuted: boolean }
  | { type: 'tool-result'; toolCallId: string; toolName: string; output: unknown; providerExecuted: boolean; link?: WorkflowLink }
  /** A tool call that failed: invalid input, an unknown tool, its HTTP call failed or its workflow execution did not succeed. */
  | { type: 'tool-error'; toolCallId: string; toolName: string; error: unknown; providerExecuted: boolean; link?: WorkflowLink }
  /** The end of one model call, with its token counts (0 when the provider sent none). */
  | { type: 'step-end'; inputTokens: number; outputTokens: number }
  /** Something the run goes on without (an MCP server whose tools could not be listed), before the answer. */
  | { type: 'warning'; warning: TRunWarning }
  /** A call the model asked for that waits for a person (its `tool-call` part came first); the answer ends after its step. */
  | { type: 'approval-request'; toolCallId: string; toolName: string; input: Record<string, unknown>; tool: ApprovalTool }

/** How {@link modelParts} streams. */
export interface StreamOptions {
  config: Config
  /** Aborts the model call and any tool call under way. */
  signal: AbortSignal
  /**
   * Awaited before each tool the model calls runs (not before a decided call: it was logged when
   * its run stopped): the executor logs the call first (src/runs/run-executor.ts, `CallLedger`).
   * A rejection fails the call as a `tool-error` without running it.
   */
  beforeExecute?: (toolCallId: string) => Promise<void>
  /**
   * Asked after each step that called tools, before the model is asked again: true stops the
   * answer there (a budget reached, src/runs/run-executor.ts).
   */
  stopAfterStep?: (steps: { promptTokens: number; completionTokens: number }[]) => Promise<boolean>
}

/**
 * The parts of the answer to `call`, in order: first a `warning` per MCP server that could not be
 * listed, then the answer. The MCP connections are closed when the answer ends, however it ends.
 * @param signal aborts the model call and any tool call under way.
 * @throws the provider's error (`APICallError` for an error status), an error part of the
 *   stream, or the abort reason.
 */
export async function* modelParts(call: ModelCall, o: StreamOptions): AsyncGenerator<ModelPart> {
  const mcp = call.mcpServers?.length && call.model.llm.supportsTools ? await openMcpTools(call.mcpServers, o) : null
  try {
    for (const warning of mcp?.warnings ?? []) yield { type: 'warning', warning }
    for await (const part of answerParts(call, o, mcp)) {
      countModelPart(call.model.llm.slug, part)
      yield part
    }
  } finally {
    await mcp?.close()
  }
}

/** The parts of the model's answer (see {@link modelParts}), with the tools of `mcp` offered besides the call's own. */
async function* answerParts(call: ModelCall, o: StreamOptions, mcp: McpSession | null): AsyncGenerator<ModelPart> {
  const links: WorkflowCallLinks = new Map()
  const approvals = new Map<string, ApprovalTool>()
  const tools = toolSetOf(call, o, links, mcp, approvals)
  let messages = call.messages
  if (call.decided?.length) {
    const results: ToolResultPart[] = []
    for await (const part of decidedParts(call.decided, tools ?? {}, { messages, signal: o.signal, links })) {
      yield part
      if (part.type === 'tool-result' || part.type === 'tool-error') results.push(modelResult(part))
    }
    yield { type: 'step-end', inputTokens: 0, outputTokens: 0 }
    messages = [...messages, { role: 'tool', content: results }]
  }
  const common = {
    // A provider's web search may need another API of the same model (OpenAI's: Responses).
    model: call.webSearch?.model ?? call.model.model,
    system: call.system,
    messages,
    allowSystemInMessages: true,
    maxOutputTokens: call.model.llm.maxOutputTokens,
    abortSignal: o.signal,
  }
  if (!tools) {
    // This call takes its telemetry hooks itself; streamText reaches the registered ones.
    const hooks = modelCallTracing()
    const callId = hooks ? crypto.randomUUID() : undefined
    try {
      const { stream } = await experimental_streamLanguageModelCall({
        ...common,
        ...(hooks
          ? {
              callId,
              onLanguageModelCallStart: hooks.onLanguageModelCallStart,
              onLanguageModelCallEnd: hooks.onLanguageModelCallEnd,
              executeLanguageModelCallInTelemetryContext: hooks.executeLanguageModelCallInTelemetryContext,
            }
          : {}),
      })
      for await (const part of stream) {
        if (part.type === 'text-delta') yield { type: 'text', text: part.text }
        else if (part.type === 'model-call-end') yield stepEnd(part.usage)
        else if (part.type === 'error') throw part.error
      }
    } catch (error) {
      if (hooks && callId) hooks.onError({ callId, error })
      throw error
    }
    return
  }
  const result = streamText({
    ...common,
    tools: o.beforeExecute ? loggedFirst(tools, o.beforeExecute) : tools,
    stopWhen: [stepCountIs(o.config.llm.maxSteps), ({ steps }) => stopAfter(steps, o)],
    maxRetries: 0,
    // Errors arrive as `error` parts of the stream and are thrown from there; the default logs to the console.
    onError: () => {},
  })
  for await (const part of result.fullStream) {
    if (part.type === 'tool-approval-request') {
      const { toolCallId, toolName, input } = part.toolCall
      const tool = approvals.get(toolName)
      if (tool) yield { type: 'approval-request', toolCallId, toolName, input: isRecord(input) ? input : {}, tool }
      continue
    }
    const mapped = partOf(part, links, o.signal)
    if (mapped) yield mapped
  }
}

/** {@link StreamOptions.stopAfterStep} asked with the tokens of the steps so far. */
async function stopAfter(
  steps: { usage: { inputTokens: number | undefined; outputTokens: number | undefined } }[],
  o: StreamOptions,
): Promise<boolean> {
  if (!o.stopAfterStep) return false
  return o.stopAfterStep(
    steps.map((step) => ({ promptTokens: step.usage.inputTokens ?? 0, completionTokens: step.usage.outputTokens ?? 0 })),
  )
}

/**
 * The result a taken-over run gives the model for a call of a tool that is not idempotent whose
 * result its dead process did not store (docs/api/runs.md, "Interrupted runs").
 */
export const LOST_CALL = 'The call may or may not have happened: the process running it stopped before its result was stored'

/**
 * The `Idempotency-Key` of call `toolCallId` of run `runUuid` (a UUID-shaped SHA-256 digest of
 * both): the same for the call made again after a takeover, different for every other call.
 */
export function idempotencyKeyOf(runUuid: string, toolCallId: string): string {
  const hex = createHash('sha256').update(`${runUuid}/${toolCallId}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** `tools` with each `execute` run only once `before` (the call's logging) resolved. */
function loggedFirst(tools: ToolSet, before: (toolCallId: string) => Promise<void>): ToolSet {
  const wrapped: ToolSet = {}
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute
    wrapped[name] = execute
      ? {
          ...tool,
          execute: async (input, options) => {
            await before(options.toolCallId)
            return execute(input, options)
          },
        }
      : tool
  }
  return wrapped
}

/**
 * The results of the calls a person decided on, in order: an approved call runs with its
 * (possibly edited) arguments and answers a `tool-result` or `tool-error` as any call; a refused
 * one answers `{denied: true, reason}` without running. A call whose tool the run no longer
 * offers (removed from the agent meanwhile) is a `tool-error` saying so.
 */
async function* decidedParts(
  decided: DecidedCall[],
  tools: ToolSet,
  o: { messages: ModelMessage[]; signal: AbortSignal; links: WorkflowCallLinks },
): AsyncGenerator<ModelPart> {
  for (const call of decided) {
    const base = { toolCallId: call.toolCallId, toolName: call.toolName, providerExecuted: false }
    if (call.lost) {
      yield { type: 'tool-error', ...base, error: new Error(LOST_CALL) }
      continue
    }
    if (!call.approved) {
      yield { type: 'tool-result', ...base, output: { denied: true, reason: call.reason } }
      continue
    }
    const execute = tools[call.toolName]?.execute
    if (!execute) {
      yield { type: 'tool-error', ...base, error: new Error(`The tool ${call.toolName} is no longer offered to this agent`) }
      continue
    }
    try {
      const output: unknown = await execute(call.input as never, {
        toolCallId: call.toolCallId,
        messages: o.messages,
        abortSignal: o.signal,
        context: {} as never,
      })
      yield { type: 'tool-result', ...base, output, ...toolMeta(base, o.links) }
    } catch (error) {
      if (o.signal.aborted) throw o.signal.reason
      yield { type: 'tool-error', ...base, error, ...toolMeta(base, o.links) }
    }
  }
}

/** A decided call's result as the model reads it in the next step (a failure as error text, as the SDK sends one). */
function modelResult(part: Extract<ModelPart, { type: 'tool-result' | 'tool-error' }>): ToolResultPart {
  const output =
    part.type === 'tool-error'
      ? { type: 'error-text' as const, value: part.error instanceof Error ? part.error.message : String(part.error) }
      : { type: 'json' as const, value: JSON.parse(JSON.stringify(part.output ?? null)) as JSONValue }
  return { type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output }
}

/**
 * A part of `streamText`'s full stream as a {@link ModelPart}, or null for the parts a run does
 * not record. @throws an `error` part's error, or the abort reason for `abort`.
 */
function partOf(part: StreamPart, links: WorkflowCallLinks, signal: AbortSignal): ModelPart | null {
  switch (part.type) {
    case 'text-delta':
      return { type: 'text', text: part.text }
    case 'tool-call':
      return { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, ...toolMeta(part) }
    case 'tool-result':
      return { type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: part.output, ...toolMeta(part, links) }
    case 'tool-error':
      return { type: 'tool-error', toolCallId: part.toolCallId, toolName: part.toolName, error: part.error, ...toolMeta(part, links) }
    case 'finish-step':
      return stepEnd(part.usage)
    case 'error':
      throw part.error
    case 'abort':
      throw signal.reason ?? new Error('aborted')
    default:
      return null
  }
}

type StreamPart = TextStreamPart<ToolSet>

/**
 * Every tool the run offers: the agent's HTTP tools, its MCP servers' tools (`mcpTools`), its
 * linked workflows and the provider's web search (their names were made unique when the run was
 * planned; MCP tools' names hold `__`, which no other does); undefined for none, or for a model
 * without tool support.
 */
function toolSetOf(
  call: ModelCall,
  o: { config: Config; signal: AbortSignal },
  links: WorkflowCallLinks,
  mcp: McpSession | null,
  approvals: Map<string, ApprovalTool>,
): ToolSet | undefined {
  if (!call.model.llm.supportsTools) return undefined
  const workflowTools = call.workflowTools ?? []
  const runUuid = call.runUuid
  const idempotencyKey = runUuid ? (toolCallId: string) => idempotencyKeyOf(runUuid, toolCallId) : undefined
  const tools: ToolSet = {
    ...toToolSet(call.tools, { ...o, idempotencyKey }),
    ...mcp?.tools,
    ...toWorkflowToolSet(workflowTools, { signal: o.signal, links }),
  }
  // The tools a person approves each call of: the SDK asks rather than executes (module comment).
  for (const binding of call.tools) {
    if (binding.requiresApproval)
      approvals.set(binding.name, { kind: 'api', toolUuid: binding.toolUuid, workflowUuid: null, inputSchema: binding.inputSchema })
  }
  for (const server of call.mcpServers ?? []) {
    if (!server.requiresApproval) continue
    for (const name of Object.keys(mcp?.tools ?? {})) {
      if (name.startsWith(`${server.prefix}__`))
        approvals.set(name, { kind: 'mcp', toolUuid: server.toolUuid, workflowUuid: null, inputSchema: schemaOf(tools[name]) })
    }
  }
  for (const binding of workflowTools) {
    if (binding.requiresApproval)
      approvals.set(binding.name, {
        kind: 'workflow',
        toolUuid: null,
        workflowUuid: binding.workflowUuid,
        inputSchema: binding.inputSchema,
      })
  }
  for (const name of approvals.keys()) tools[name] = { ...tools[name], needsApproval: true }
  if (call.webSearch) tools[call.webSearch.name] = call.webSearch.tool
  return Object.keys(tools).length > 0 ? tracedTools(tools) : undefined
}

/**
 * `tools` with each call executed inside an `execute_tool <name>` span (docs/operations.md,
 * "Traces"): its outbound request (HTTP tool, MCP server, linked workflow) is the span's child.
 * Arguments and results are recorded only when message content is captured. As they are while
 * tracing is off.
 */
function tracedTools(tools: ToolSet): ToolSet {
  if (!tracingEnabled()) return tools
  const traced: ToolSet = {}
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute
    traced[name] = execute
      ? {
          ...tool,
          execute: (input, options) =>
            inSpan(
              `execute_tool ${name}`,
              {
                attributes: {
                  [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
                  [ATTR_GEN_AI_TOOL_NAME]: name,
                  [ATTR_GEN_AI_TOOL_CALL_ID]: options.toolCallId,
                  [ATTR_GEN_AI_TOOL_TYPE]: 'function',
                },
              },
              async (span) => {
                if (captureMessageContent()) span.setAttribute(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, JSON.stringify(input ?? null))
                const output: unknown = await execute(input, options)
                if (captureMessageContent()) span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, JSON.stringify(output ?? null))
                return output
              },
            ),
        }
      : tool
  }
  return traced
}

/** The JSON Schema an AI SDK tool was given (`jsonSchema(...)` keeps it as `jsonSchema`), or null. */
function schemaOf(tool: ToolSet[string] | undefined): Record<string, unknown> | null {
  const schema = (tool?.inputSchema as { jsonSchema?: unknown } | undefined)?.jsonSchema
  return isRecord(schema) ? schema : null
}

/** Whether the provider ran a tool part's call itself, and the workflow execution the call made (from `links`). */
function toolMeta(
  part: { toolCallId: string; providerExecuted?: boolean },
  links?: WorkflowCallLinks,
): { providerExecuted: boolean; link?: WorkflowLink } {
  const link = links?.get(part.toolCallId)
  return { providerExecuted: part.providerExecuted === true, ...(link ? { link } : {}) }
}

const stepEnd = (usage: { inputTokens: number | undefined; outputTokens: number | undefined }): ModelPart => ({
  type: 'step-end',
  inputTokens: usage.inputTokens ?? 0,
  outputTokens: usage.outputTokens ?? 0,
})
