/**
 * One model call that answers text, for the service's own small tasks (thread names, memory
 * extraction): no provider retries, bounded by `LLM_TIMEOUT_MS`, and a failure mapped to the
 * named errors runs use (docs/api/conventions.md: 502 for a provider that failed, 504 for one
 * that did not answer in time). The messages never carry a credential or the provider's own text.
 * Answers that must be a checked JSON object go through ./structured-generate.ts instead.
 */
import { generateText, type ModelMessage } from 'ai'
import type { Config } from '../platform/config.ts'
import { UpstreamError, UpstreamTimeoutError } from '../platform/errors.ts'
import type { ResolvedModel } from './registry.ts'

/** What to ask: a system prompt and either one prompt or a conversation. */
export type Completion = { system: string; maxOutputTokens?: number } & ({ prompt: string } | { messages: ModelMessage[] })

/**
 * The named error for a model call that failed: 504 when `LLM_TIMEOUT_MS` aborted it, else a
 * 502 saying only what the call was for (the provider's text may quote the request or a key).
 * @param task what the call was for, in the 502 message ("name the thread").
 */
export function modelCallError(error: unknown, task: string): UpstreamError | UpstreamTimeoutError {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return new UpstreamTimeoutError('The model did not answer in time')
  }
  return new UpstreamError(`The model provider failed to ${task}`)
}

/**
 * The model's text answer.
 * @param task what the call was for, in the 502 message ("name the thread").
 * @param onUsage told the call's tokens once it answered (usage and budgets).
 * @throws UpstreamTimeoutError past `LLM_TIMEOUT_MS`; UpstreamError for any other failure.
 */
export async function completeText(
  model: ResolvedModel,
  config: Pick<Config, 'llm'>,
  ask: Completion,
  task: string,
  onUsage?: (tokens: { promptTokens: number; completionTokens: number }) => void,
): Promise<string> {
  try {
    const answer = await generateText({ ...ask, model: model.model, maxRetries: 0, abortSignal: AbortSignal.timeout(config.llm.timeoutMs) })
    onUsage?.({ promptTokens: answer.usage.inputTokens ?? 0, completionTokens: answer.usage.outputTokens ?? 0 })
    return answer.text
  } catch (error) {
    throw modelCallError(error, task)
  }
}
