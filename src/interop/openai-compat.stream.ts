/**
 * The streams of the OpenAI-compatible API (docs/api/openai.md, "Streaming"): a run started in
 * the background by ./openai-compat.service.ts, followed through its event log (the same log as
 * `GET runs/{x}/events`), as the frames of OpenAI's Server-Sent Event streams. Only the run's text
 * deltas and its end are sent: its tool calls are the agent's own steps, not the client's.
 */
import { isRecord } from '../access/wire.ts'
import { toApprovalRequest, toChatChunk, toChatUsageChunk, toOutputMessage, toOutputText, toResponse, type OpenAiErrorObject, type ResponseEcho } from './openai-compat.wire.ts'
import type { TApproval, TUsage } from '../runs/index.ts'
import type { ResourceCtx } from '../context.ts'
import { runs } from '../runs/index.ts'
import type { StartedRun } from './openai-compat.service.ts'

/** One Server-Sent Event: an optional event name, and JSON data (or the literal `[DONE]`). */
export interface SseFrame {
  event?: string
  data: unknown
}

/**
 * How a run ended, as its final event says; or, `approvals` set, that it stopped to wait for a
 * person (docs/api/openai.md, "Approvals"), with its output and usage so far.
 */
type Ending = { ok: true; output: string; usage: TUsage; approvals?: TApproval[] } | { ok: false; error: OpenAiErrorObject }

/** The text of a `text.delta` event, or null for any other event. */
function deltaOf(event: { type: string; data: unknown }): string | null {
  return event.type === 'text.delta' && isRecord(event.data) && typeof event.data.text === 'string' ? event.data.text : null
}

/** The ending a final event (`run.succeeded`, `run.failed`, `run.canceled`) says, or null for another event. */
function endingOf(event: { type: string; data: unknown }): Ending | null {
  const data = isRecord(event.data) ? event.data : {}
  if (event.type === 'run.succeeded') {
    const usage = isRecord(data.usage) ? data.usage : {}
    const count = (key: string) => (typeof usage[key] === 'number' ? usage[key] : 0)
    return {
      ok: true,
      output: typeof data.output === 'string' ? data.output : '',
      usage: { prompt_tokens: count('prompt_tokens'), completion_tokens: count('completion_tokens'), total_tokens: count('total_tokens'), cost: count('cost') },
    }
  }
  if (event.type !== 'run.failed' && event.type !== 'run.canceled') return null
  const error = isRecord(data.error) ? data.error : {}
  const code = typeof error.code === 'string' ? error.code : event.type === 'run.canceled' ? 'canceled' : 'upstream_error'
  const message = typeof error.message === 'string' ? error.message : 'The run was canceled'
  const type = code === 'canceled' ? 'invalid_request_error' : code === 'budget_exceeded' ? 'insufficient_quota' : 'server_error'
  return { ok: false, error: { message, type, param: null, code } }
}

/**
 * The run's text deltas after its event `afterSeq` as they come, then how it ended, or that it
 * waits for approvals (read from the run: they are stored together); null when `signal` stopped
 * the following first.
 */
async function* follow(ctx: ResourceCtx, runUuid: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<string, Ending | null> {
  const events = await runs.events(ctx, runUuid, afterSeq, signal)
  for await (const event of events) {
    const delta = deltaOf(event)
    if (delta !== null) {
      if (delta) yield delta
      continue
    }
    if (event.type === 'run.approval_requested') {
      const { data } = await runs.retrieve(ctx, runUuid)
      return { ok: true, output: data.run.output ?? '', usage: data.usage, approvals: data.approvals }
    }
    const ending = endingOf(event)
    if (ending) return ending
  }
  return null
}

/**
 * The `chat.completion.chunk` stream of a started run: a first chunk with the assistant's role,
 * one per text delta, a last one with `finish_reason: 'stop'`, the usage chunk when
 * `includeUsage`, then `[DONE]`. A run that fails sends an error frame (the SDKs throw it) and no
 * `[DONE]`.
 */
export async function* chatFrames(ctx: ResourceCtx, run: StartedRun, includeUsage: boolean, signal: AbortSignal): AsyncGenerator<SseFrame> {
  const { ref } = run
  yield { data: toChatChunk(ref, { role: 'assistant', content: '' }, null, includeUsage) }
  const deltas = follow(ctx, ref.runUuid, run.afterSeq ?? 0, signal)
  let next = await deltas.next()
  for (; !next.done; next = await deltas.next()) yield { data: toChatChunk(ref, { content: next.value }, null, includeUsage) }
  const ending = next.value
  if (!ending) return
  if (!ending.ok) {
    yield { data: { error: ending.error } }
    return
  }
  yield { data: toChatChunk(ref, {}, 'stop', includeUsage) }
  if (includeUsage) yield { data: toChatUsageChunk(ref, ending.usage) }
  yield { data: '[DONE]' }
}

/**
 * The Responses API event stream of a started run, as OpenAI sends it for one text message:
 * `response.created`, `response.in_progress`, `response.output_item.added`,
 * `response.content_part.added`, a `response.output_text.delta` per text delta,
 * `response.output_text.done`, `response.content_part.done`, `response.output_item.done`, then
 * `response.completed` (or `response.failed` with the error), each with its `sequence_number`.
 */
export async function* responseFrames(ctx: ResourceCtx, run: StartedRun, echo: ResponseEcho, signal: AbortSignal): AsyncGenerator<SseFrame> {
  const { ref } = run
  let sequence = 0
  const frame = (type: string, fields: Record<string, unknown>): SseFrame => ({ event: type, data: { type, sequence_number: sequence++, ...fields } })
  const item = { item_id: `msg_${ref.runUuid}`, output_index: 0 }
  const part = { ...item, content_index: 0 }
  yield frame('response.created', { response: toResponse(ref, echo, { status: 'in_progress' }) })
  yield frame('response.in_progress', { response: toResponse(ref, echo, { status: 'in_progress' }) })
  yield frame('response.output_item.added', { output_index: 0, item: toOutputMessage(ref, '', 'in_progress') })
  yield frame('response.content_part.added', { ...part, part: toOutputText('') })
  const deltas = follow(ctx, ref.runUuid, run.afterSeq ?? 0, signal)
  let next = await deltas.next()
  for (; !next.done; next = await deltas.next()) yield frame('response.output_text.delta', { ...part, delta: next.value, logprobs: [] })
  const ending = next.value
  if (!ending) return
  if (!ending.ok) {
    yield frame('response.failed', { response: toResponse(ref, echo, { status: 'failed', error: { code: ending.error.code ?? 'server_error', message: ending.error.message } }) })
    return
  }
  yield frame('response.output_text.done', { ...part, text: ending.output, logprobs: [] })
  yield frame('response.content_part.done', { ...part, part: toOutputText(ending.output) })
  yield frame('response.output_item.done', { output_index: 0, item: toOutputMessage(ref, ending.output, 'completed') })
  // A run that waits: OpenAI's approval request items follow the text (docs/api/openai.md, "Approvals").
  for (const [index, approval] of (ending.approvals ?? []).entries()) {
    yield frame('response.output_item.added', { output_index: index + 1, item: toApprovalRequest(approval) })
    yield frame('response.output_item.done', { output_index: index + 1, item: toApprovalRequest(approval) })
  }
  yield frame('response.completed', { response: toResponse(ref, echo, { status: 'completed', output: ending.output, usage: ending.usage, approvals: ending.approvals, streamed: true }) })
}
