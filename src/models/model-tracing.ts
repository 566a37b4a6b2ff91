/**
 * Spans of model calls (docs/operations.md, "Traces"), through the AI SDK's telemetry
 * integration interface: `chat <model>` for each language model call, `embeddings <model>` for
 * each embedding call, with the GenAI semantic conventions' attributes (`gen_ai.operation.name`,
 * `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`,
 * `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`).
 * The provider's HTTP request runs inside the `chat` span, so it carries that span's
 * `traceparent`. Prompt and answer texts (`gen_ai.system_instructions`, `gen_ai.input.messages`,
 * `gen_ai.output.messages`) are recorded only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
 * is true.
 *
 * Why not `@ai-sdk/otel`: it opens an `invoke_agent` span of its own around every
 * `generateText`/`streamText`, which would double a run's span (src/runs/run-manager.ts opens
 * `invoke_agent <agent name>` around the whole run, approvals and resumptions included) and put a
 * prompt run's model call under an agent span. Tool calls are spanned where runs execute them
 * (src/runs/model-stream.ts), so that calls decided after an approval are spanned too.
 */
import type {
  EmbeddingModelCallEndEvent,
  EmbeddingModelCallStartEvent,
  LanguageModelCallEndEvent,
  LanguageModelCallStartEvent,
  Telemetry,
} from 'ai'
import {
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating'
import { registerTelemetry } from 'ai'
import { captureMessageContent, failSpan, runInContext, SpanKind, startSpan, tracingEnabled, type Context, type Span } from '../platform/tracing.ts'

/**
 * `gen_ai.provider.name` of an AI SDK provider id (`openai.chat`, `anthropic.messages`,
 * `openai-compatible.chat`): its first segment, as the conventions name the well-known ones.
 */
export function providerNameOf(provider: string): string {
  return provider.split('.', 1)[0]
}

/** The model-call hooks, as `experimental_streamLanguageModelCall` takes them and as a registered integration calls them. */
export interface ModelCallHooks {
  onLanguageModelCallStart(event: LanguageModelCallStartEvent): void
  onLanguageModelCallEnd(event: LanguageModelCallEndEvent): void
  executeLanguageModelCallInTelemetryContext<T>(options: { callId: string; execute: () => PromiseLike<T> }): Promise<T>
  /** Ends the call's open spans as failed (the call threw, or was aborted). */
  onError(event: { callId: string; error: unknown }): void
}

/** Open spans of language model calls by call id, and of embedding calls by their embed call id. */
const chats = new Map<string, { span: Span; context: Context }>()
const embeddings = new Map<string, { span: Span; callId: string }>()

function endChatFailed(callId: string, error: unknown): void {
  const open = chats.get(callId)
  if (open) {
    chats.delete(callId)
    failSpan(open.span, error)
    open.span.end()
  }
  for (const [id, entry] of embeddings) {
    if (entry.callId !== callId) continue
    embeddings.delete(id)
    failSpan(entry.span, error)
    entry.span.end()
  }
}

/** The hooks (module comment); shared by every call, keyed by the SDK's call ids. */
export const modelCallHooks: ModelCallHooks & Telemetry = {
  onLanguageModelCallStart(event) {
    const { span, context } = startSpan(`chat ${event.modelId}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
        [ATTR_GEN_AI_PROVIDER_NAME]: providerNameOf(event.provider),
        [ATTR_GEN_AI_REQUEST_MODEL]: event.modelId,
        ...(event.maxOutputTokens !== undefined ? { [ATTR_GEN_AI_REQUEST_MAX_TOKENS]: event.maxOutputTokens } : {}),
      },
    })
    if (captureMessageContent()) {
      if (event.instructions !== undefined) span.setAttribute(ATTR_GEN_AI_SYSTEM_INSTRUCTIONS, JSON.stringify(event.instructions))
      span.setAttribute(ATTR_GEN_AI_INPUT_MESSAGES, JSON.stringify(event.messages))
    }
    // A step asked again (a retry) replaces its unfinished span.
    chats.get(event.callId)?.span.end()
    chats.set(event.callId, { span, context })
  },
  onLanguageModelCallEnd(event) {
    const open = chats.get(event.callId)
    if (!open) return
    chats.delete(event.callId)
    const { span } = open
    span.setAttributes({
      [ATTR_GEN_AI_RESPONSE_MODEL]: event.modelId,
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [event.finishReason],
      ...(event.responseId ? { [ATTR_GEN_AI_RESPONSE_ID]: event.responseId } : {}),
      ...(event.usage.inputTokens !== undefined ? { [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: event.usage.inputTokens } : {}),
      ...(event.usage.outputTokens !== undefined ? { [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: event.usage.outputTokens } : {}),
    })
    if (captureMessageContent()) {
      span.setAttribute(ATTR_GEN_AI_OUTPUT_MESSAGES, JSON.stringify([{ role: 'assistant', parts: event.content, finish_reason: event.finishReason }]))
    }
    span.end()
  },
  async executeLanguageModelCallInTelemetryContext<T>({ callId, execute }: { callId: string; execute: () => PromiseLike<T> }): Promise<T> {
    const open = chats.get(callId)
    return open ? runInContext(open.context, () => Promise.resolve(execute())) : execute()
  },
  executeLanguageModelCall<T>(options: { callId: string; execute: () => PromiseLike<T> }): PromiseLike<T> {
    return modelCallHooks.executeLanguageModelCallInTelemetryContext(options)
  },
  onEmbedStart(event: EmbeddingModelCallStartEvent) {
    const { span } = startSpan(`embeddings ${event.modelId}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: 'embeddings',
        [ATTR_GEN_AI_PROVIDER_NAME]: providerNameOf(event.provider),
        [ATTR_GEN_AI_REQUEST_MODEL]: event.modelId,
      },
    })
    embeddings.set(event.embedCallId, { span, callId: event.callId })
  },
  onEmbedEnd(event: EmbeddingModelCallEndEvent) {
    const open = embeddings.get(event.embedCallId)
    if (!open) return
    embeddings.delete(event.embedCallId)
    open.span.setAttributes({
      [ATTR_GEN_AI_RESPONSE_MODEL]: event.modelId,
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: event.usage.tokens,
    })
    open.span.end()
  },
  onError(event) {
    const { callId, error } = event as { callId: string; error: unknown }
    endChatFailed(callId, error)
  },
  onAbort(event) {
    endChatFailed(event.callId, new DOMException('The model call was aborted', 'AbortError'))
  },
}

/**
 * Registers the hooks with the AI SDK for every `generateText`, `streamText`, `embed` and
 * `embedMany` of this process, when tracing is on (the runtime calls it once it started tracing).
 */
export function traceModelCalls(): void {
  if (!tracingEnabled() || registered) return
  registered = true
  registerTelemetry(modelCallHooks)
}
let registered = false

/** The hooks for a call that takes them itself (`experimental_streamLanguageModelCall`); null while tracing is off. */
export function modelCallTracing(): ModelCallHooks | null {
  return tracingEnabled() ? modelCallHooks : null
}
