/**
 * The built-in offline test model (provider `local`, docs/api/resources.md: "clearly named as a test
 * model that does not think"). It implements the AI SDK's language model specification (v4, what
 * `generateText` and `streamText` of `ai` 7 take), so runs treat it like any provider's model:
 *
 * - it answers `I am the local test model; I do not think. You said: <text of the last user
 *   message, at most 200 characters>`, streamed in a few text deltas;
 * - usage: input tokens = ceil(characters of the whole prompt / 4), output tokens likewise for
 *   the answer; finish reason `stop`; it needs no network or key;
 * - it calls a tool only when told to: a last user message `/call <tool name> <JSON arguments>`
 *   naming a tool it is offered is answered with that one call (finish reason `tool-calls`), and
 *   once the prompt ends with the tool's result it answers `I am the local test model; I do not
 *   think. The tool answered: <the result as JSON, at most 200 characters>`. So tool calls and
 *   their approvals can be tried offline (docs/api/runs.md, "The local test model").
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider'

/** The model id of the local test model (also its catalog slug). */
export const LOCAL_MODEL_ID = 'local-test-model'

/** What the answer starts with. */
export const LOCAL_MODEL_PREFIX = 'I am the local test model; I do not think. You said: '

/** Most characters of the user's message the answer repeats. */
const ECHO_MAX_CHARS = 200

/** Characters (code points, so no surrogate pair is ever split) of a text. */
const charCount = (text: string): number => Array.from(text).length

/** The text parts of the last user message, joined by new lines ('' when there is none). */
export function lastUserText(prompt: LanguageModelV4Prompt): string {
  for (let index = prompt.length - 1; index >= 0; index -= 1) {
    const message = prompt[index]
    if (message.role !== 'user') continue
    return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n')
  }
  return ''
}

/** Characters of the whole prompt: system text, text and reasoning parts, tool inputs and outputs as JSON. */
export function promptCharacters(prompt: LanguageModelV4Prompt): number {
  let total = 0
  for (const message of prompt) {
    if (message.role === 'system') {
      total += charCount(message.content)
      continue
    }
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') total += charCount(part.text)
      else if (part.type === 'tool-call') total += charCount(JSON.stringify(part.input) ?? '')
      else if (part.type === 'tool-result') total += charCount(JSON.stringify(part.output) ?? '')
    }
  }
  return total
}

/** What the answer starts with once a tool has answered. */
export const LOCAL_MODEL_TOOL_PREFIX = 'I am the local test model; I do not think. The tool answered: '

/** The deterministic answer to a prompt. */
export function localAnswer(prompt: LanguageModelV4Prompt): string {
  const last = prompt.at(-1)
  if (last?.role === 'tool') {
    // The result as the tool gave it: the value of a JSON or text output, not its wrapper.
    const outputs = last.content.flatMap((part) => (part.type === 'tool-result' ? ['value' in part.output ? part.output.value : part.output] : []))
    const said = JSON.stringify(outputs.length === 1 ? outputs[0] : outputs) ?? ''
    return LOCAL_MODEL_TOOL_PREFIX + Array.from(said).slice(0, ECHO_MAX_CHARS).join('')
  }
  return LOCAL_MODEL_PREFIX + Array.from(lastUserText(prompt)).slice(0, ECHO_MAX_CHARS).join('')
}

/**
 * The call a prompt asks for (module comment): its last message a user's `/call <name> <JSON>`
 * naming an offered function tool, with a JSON object (or nothing) as arguments; else null.
 */
export function requestedCall(options: LanguageModelV4CallOptions): { toolName: string; input: string } | null {
  if (options.prompt.at(-1)?.role !== 'user') return null
  const match = /^\/call\s+(\S+)\s*([\s\S]*)$/.exec(lastUserText(options.prompt).trim())
  if (!match) return null
  const offered = (options.tools ?? []).some((tool) => tool.type === 'function' && tool.name === match[1])
  if (!offered) return null
  const text = match[2].trim() || '{}'
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null
  } catch {
    return null
  }
  return { toolName: match[1], input: text }
}

function usageOf(prompt: LanguageModelV4Prompt, answer: string): LanguageModelV4Usage {
  const input = Math.ceil(promptCharacters(prompt) / 4)
  const output = Math.ceil(charCount(answer) / 4)
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  }
}

/** Splits a text into about `parts` pieces on code point boundaries (never empty pieces). */
function chunks(text: string, parts: number): string[] {
  const chars = Array.from(text)
  const size = Math.max(1, Math.ceil(chars.length / parts))
  const out: string[] = []
  for (let start = 0; start < chars.length; start += size) out.push(chars.slice(start, start + size).join(''))
  return out
}

const STOP = { unified: 'stop', raw: 'stop' } as const
const TOOL_CALLS = { unified: 'tool-calls', raw: 'tool_calls' } as const

/** Rejects when the call was aborted before it started, as a real provider's fetch would. */
function checkAborted(options: LanguageModelV4CallOptions): void {
  options.abortSignal?.throwIfAborted()
}

/** A new instance of the local test model. */
export function createLocalModel(modelId: string = LOCAL_MODEL_ID): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'local',
    modelId,
    supportedUrls: {},

    async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      checkAborted(options)
      const call = requestedCall(options)
      if (call) {
        return {
          content: [{ type: 'tool-call', toolCallId: `local-call-${Date.now()}`, ...call }],
          finishReason: TOOL_CALLS,
          usage: usageOf(options.prompt, call.input),
          response: { id: `local-${Date.now()}`, timestamp: new Date(), modelId },
          warnings: [],
        }
      }
      const answer = localAnswer(options.prompt)
      return {
        content: [{ type: 'text', text: answer }],
        finishReason: STOP,
        usage: usageOf(options.prompt, answer),
        response: { id: `local-${Date.now()}`, timestamp: new Date(), modelId },
        warnings: [],
      }
    },

    async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
      checkAborted(options)
      const call = requestedCall(options)
      const answer = localAnswer(options.prompt)
      const head: LanguageModelV4StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: `local-${Date.now()}`, timestamp: new Date(), modelId },
      ]
      const parts: LanguageModelV4StreamPart[] = call
        ? [
            ...head,
            { type: 'tool-call', toolCallId: `local-call-${Date.now()}`, ...call },
            { type: 'finish', finishReason: TOOL_CALLS, usage: usageOf(options.prompt, call.input) },
          ]
        : [
            ...head,
            { type: 'text-start', id: 'text-0' },
            ...chunks(answer, 4).map((delta): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 'text-0', delta })),
            { type: 'text-end', id: 'text-0' },
            { type: 'finish', finishReason: STOP, usage: usageOf(options.prompt, answer) },
          ]
      let next = 0
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        pull(controller) {
          if (options.abortSignal?.aborted) {
            controller.error(options.abortSignal.reason)
            return
          }
          if (next < parts.length) controller.enqueue(parts[next++])
          else controller.close()
        },
      })
      return { stream }
    },
  }
}
