/**
 * The model's side of a run (docs/api/runs.md): the parts
 * of its answer as the run executor records them, from the Vercel AI SDK.
 *
 * A run whose model is offered tools goes through `streamText`, which runs the tool loop: it
 * executes each tool call ({@link toToolSet}), sends the results back and calls the model again,
 * at most `LLM_MAX_STEPS` times. A run without tools has no loop, so it makes its one model call
 * through the SDK's `experimental_streamLanguageModelCall`: the same prompt conversion, provider
 * call and stream parsing that `streamText` runs for each step, without the multi-step
 * machinery around it. On this machine that saves about 1.3 ms of CPU per run (docs/benchmarks.md,
 * "Runs benchmark").
 */
import { experimental_streamLanguageModelCall, stepCountIs, streamText } from 'ai'
import type { Config } from '../platform/config.ts'
import type { ModelCall } from './run-types.ts'
import { toToolSet } from './tools.ts'

/** One part of a model's answer, as the run executor records it. */
export type ModelPart =
  | { type: 'text'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-result'; toolCallId: string; toolName: string; output: unknown }
  /** A tool call that failed: invalid input, an unknown tool, or its HTTP call failed. */
  | { type: 'tool-error'; toolCallId: string; toolName: string; error: unknown }
  /** The end of one model call, with its token counts (0 when the provider sent none). */
  | { type: 'step-end'; inputTokens: number; outputTokens: number }

/**
 * The parts of the answer to `call`, in order.
 * @param signal aborts the model call and any tool call under way.
 * @throws the provider's error (`APICallError` for an error status), an error part of the
 *   stream, or the abort reason.
 */
export async function* modelParts(call: ModelCall, o: { config: Config; signal: AbortSignal }): AsyncGenerator<ModelPart> {
  const tools = call.tools.length > 0 && call.model.llm.supportsTools ? toToolSet(call.tools, o) : undefined
  const common = {
    model: call.model.model,
    system: call.system,
    messages: call.messages,
    allowSystemInMessages: true,
    maxOutputTokens: call.model.llm.maxOutputTokens,
    abortSignal: o.signal,
  }
  if (!tools) {
    const { stream } = await experimental_streamLanguageModelCall(common)
    for await (const part of stream) {
      if (part.type === 'text-delta') yield { type: 'text', text: part.text }
      else if (part.type === 'model-call-end') yield stepEnd(part.usage)
      else if (part.type === 'error') throw part.error
    }
    return
  }
  const result = streamText({
    ...common,
    tools,
    stopWhen: stepCountIs(o.config.llm.maxSteps),
    maxRetries: 0,
    // Errors arrive as `error` parts of the stream and are thrown from there; the default logs to the console.
    onError: () => {},
  })
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        yield { type: 'text', text: part.text }
        break
      case 'tool-call':
        yield { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input }
        break
      case 'tool-result':
        yield { type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: part.output }
        break
      case 'tool-error':
        yield { type: 'tool-error', toolCallId: part.toolCallId, toolName: part.toolName, error: part.error }
        break
      case 'finish-step':
        yield stepEnd(part.usage)
        break
      case 'error':
        throw part.error
      case 'abort':
        throw o.signal.reason ?? new Error('aborted')
      default:
        break
    }
  }
}

const stepEnd = (usage: { inputTokens: number | undefined; outputTokens: number | undefined }): ModelPart => ({
  type: 'step-end',
  inputTokens: usage.inputTokens ?? 0,
  outputTokens: usage.outputTokens ?? 0,
})
