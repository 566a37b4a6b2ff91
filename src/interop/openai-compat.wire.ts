/**
 * Answer shapes of the OpenAI-compatible API (docs/api/openai.md), built from a run: the
 * `chat.completion` object and its `chat.completion.chunk` stream, and the Responses API's
 * `response` object and its event stream, as OpenAI's API reference defines them (the fields the
 * official SDKs read). Ids are the run's: `chatcmpl-<run uuid>`, `resp_<run uuid>`, `msg_<run uuid>`.
 */
import type { TApproval, TUsage } from '../runs/index.ts'

/** Seconds since the epoch, as OpenAI's `created` / `created_at`. */
export const unixSeconds = (at: string | Date | number): number => Math.floor(new Date(at).getTime() / 1000)

/** What every answer of one run names. */
export interface RunRef {
  runUuid: string
  threadUuid: string | null
  /** The `model` the answer names: the agent's uuid. */
  model: string
  /** Seconds since the epoch. */
  created: number
}

/** OpenAI's chat usage. */
export const chatUsage = (usage: Pick<TUsage, 'prompt_tokens' | 'completion_tokens' | 'total_tokens'>) => ({
  prompt_tokens: usage.prompt_tokens,
  completion_tokens: usage.completion_tokens,
  total_tokens: usage.total_tokens,
})

/**
 * A `chat.completion`; `thread_uuid` is this API's own addition (docs/api/openai.md, "Threads"):
 * send it back as `metadata.thread_uuid` to continue the conversation.
 */
export function toChatCompletion(ref: RunRef, output: string, usage: TUsage) {
  return {
    id: `chatcmpl-${ref.runUuid}`,
    object: 'chat.completion' as const,
    created: ref.created,
    model: ref.model,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: output, refusal: null }, finish_reason: 'stop' as const, logprobs: null }],
    usage: chatUsage(usage),
    system_fingerprint: null,
    thread_uuid: ref.threadUuid,
  }
}

/** One `chat.completion.chunk` with `delta` (null `delta` with a `finish_reason`: the last choice chunk). */
export function toChatChunk(ref: RunRef, delta: { role?: 'assistant'; content?: string }, finishReason: 'stop' | null, withUsage: boolean) {
  return {
    id: `chatcmpl-${ref.runUuid}`,
    object: 'chat.completion.chunk' as const,
    created: ref.created,
    model: ref.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(withUsage ? { usage: null } : {}),
  }
}

/** The usage chunk of a stream with `stream_options.include_usage`: no choices. */
export function toChatUsageChunk(ref: RunRef, usage: TUsage) {
  return {
    id: `chatcmpl-${ref.runUuid}`,
    object: 'chat.completion.chunk' as const,
    created: ref.created,
    model: ref.model,
    system_fingerprint: null,
    choices: [],
    usage: chatUsage(usage),
  }
}

/** OpenAI's error object (inside `{error}` or a stream's error event). */
export interface OpenAiErrorObject {
  message: string
  type: string
  param: string | null
  code: string | null
}

/** What a response echoes of its request. */
export interface ResponseEcho {
  instructions: string | null
  previousResponseId: string | null
  metadata: Record<string, string>
}

/** A Responses API output message holding `text`. */
export function toOutputMessage(ref: RunRef, text: string, status: 'in_progress' | 'completed') {
  return {
    type: 'message' as const,
    id: `msg_${ref.runUuid}`,
    status,
    role: 'assistant' as const,
    content: status === 'in_progress' ? [] : [toOutputText(text)],
  }
}

/** An `output_text` content part. */
export const toOutputText = (text: string) => ({ type: 'output_text' as const, text, annotations: [], logprobs: [] })

/** Responses usage from a run's usage. */
const responseUsage = (usage: TUsage) => ({
  input_tokens: usage.prompt_tokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: usage.completion_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.total_tokens,
})

/**
 * A `response` object: `in_progress` (no output yet), `completed` (the message and usage) or
 * `failed` (the error).
 */
export function toResponse(
  ref: RunRef,
  echo: ResponseEcho,
  state:
    | { status: 'in_progress' }
    | { status: 'completed'; output: string; usage: TUsage; approvals?: TApproval[]; streamed?: boolean }
    | { status: 'failed'; error: { code: string; message: string } },
) {
  const completed = state.status === 'completed'
  // A run that waits for a person: OpenAI's approval request items follow its text (docs/api/openai.md, "Approvals").
  const asked = state.status === 'completed' ? (state.approvals ?? []).map(toApprovalRequest) : []
  return {
    id: `resp_${ref.runUuid}`,
    object: 'response' as const,
    created_at: ref.created,
    status: state.status,
    model: ref.model,
    // A stream always opened its message item, so its completed response keeps it, even empty.
    output: completed ? [...(asked.length === 0 || state.output || state.streamed ? [toOutputMessage(ref, state.output, 'completed')] : []), ...asked] : [],
    ...(completed ? { output_text: state.output } : {}),
    usage: completed ? responseUsage(state.usage) : null,
    error: state.status === 'failed' ? { code: 'server_error', message: state.error.message } : null,
    incomplete_details: null,
    instructions: echo.instructions,
    previous_response_id: echo.previousResponseId,
    metadata: { ...echo.metadata, ...(ref.threadUuid ? { thread_uuid: ref.threadUuid } : {}) },
    parallel_tool_calls: false,
    temperature: null,
    top_p: null,
    tool_choice: 'auto' as const,
    tools: [],
    text: { format: { type: 'text' as const } },
    truncation: 'disabled' as const,
    store: true,
    background: false,
  }
}

/** A pending approval as OpenAI's `mcp_approval_request` output item (`server_label` is always `agent`). */
export function toApprovalRequest(approval: TApproval) {
  return {
    type: 'mcp_approval_request' as const,
    id: approval.uuid,
    name: approval.tool_name,
    arguments: JSON.stringify(approval.arguments),
    server_label: 'agent',
  }
}
