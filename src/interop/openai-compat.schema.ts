/**
 * Request shapes of the OpenAI-compatible API (docs/api/openai.md): `POST chat/completions` and
 * `POST responses`, as OpenAI's API reference names their fields. Unknown fields are refused, as
 * OpenAI refuses them ("Unrecognized request argument"); fields OpenAI accepts that an agent has no
 * use for are accepted and ignored ({@link IGNORED_CHAT_PARAMS}, {@link IGNORED_RESPONSE_PARAMS});
 * values that would ask for something an agent cannot do (`n > 1`, client-declared `tools`,
 * `logprobs`, a JSON `response_format`, images) are refused with the field named.
 */
import { z } from 'zod'
import { RUN_INPUT_MAX } from '../runs/index.ts'
import { text } from '../access/wire.ts'

/** One message's text, bounded as a run's input. */
const MessageText = text(RUN_INPUT_MAX)

/** A text content part; other part types (images, audio, files) are refused. */
const TextPart = z.object({
  type: z.literal('text', { error: 'Only text content parts are supported' }),
  text: MessageText,
})

/** `content`: a string or text parts. */
const ChatContent = z.union([MessageText, z.array(TextPart).min(1)])

const ROLE_ERROR = "Supported roles are 'system', 'developer', 'user' and 'assistant': an agent runs its own tools, so 'tool' messages are not supported"

/** A chat message; `tool_calls` may only be empty (the client declares no tools). */
export const ChatMessage = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant'], { error: ROLE_ERROR }),
  content: ChatContent,
  name: z.string().max(256).optional(),
  refusal: z.string().nullish(),
  tool_calls: z.array(z.unknown()).max(0, 'Client tool calls are not supported: the agent runs its own tools').nullish(),
})
export type TChatMessage = z.infer<typeof ChatMessage>

/** OpenAI's `metadata`: at most 16 string values; `thread_uuid` names a thread to continue. */
const Metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, 'At most 16 keys')
  .superRefine((value, issue) => {
    if (value.thread_uuid !== undefined && !z.uuid().safeParse(value.thread_uuid).success) {
      issue.addIssue({ code: 'custom', path: ['thread_uuid'], message: 'Must be the uuid of a thread of this agent' })
    }
  })

const num = z.number().nullish()
/** Accepted and ignored: they tune the sampling or the bookkeeping of a model an agent chooses itself. */
const ignored = {
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  frequency_penalty: num,
  presence_penalty: num,
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  user: z.string().max(256).nullish(),
  logit_bias: z.record(z.string(), z.number()).nullish(),
  store: z.boolean().nullish(),
  service_tier: z.string().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  reasoning_effort: z.string().nullish(),
  verbosity: z.string().nullish(),
  prompt_cache_key: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
}
/** The chat parameters accepted and ignored (docs/api/openai.md). */
export const IGNORED_CHAT_PARAMS = Object.keys(ignored)

const noTools = z.array(z.unknown()).max(0, 'Client-declared tools are not supported: the agent runs its own tools').nullish()

/** `POST /api/v1/openai/chat/completions`. */
export const ChatCompletionRequest = z.strictObject({
  model: z.string().min(1).max(200),
  messages: z.array(ChatMessage).min(1, 'Send at least one message'),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).nullish(),
  n: z.literal(1, { error: 'Only n = 1 is supported' }).nullish(),
  metadata: Metadata.nullish(),
  logprobs: z.literal(false, { error: 'logprobs are not available for agents' }).nullish(),
  response_format: z.object({ type: z.literal('text', { error: "Only response_format {type: 'text'} is supported" }) }).nullish(),
  modalities: z.array(z.literal('text', { error: "Only the 'text' modality is supported" })).nullish(),
  tools: noTools,
  functions: noTools,
  tool_choice: z.enum(['none', 'auto'], { error: "Only 'none' and 'auto' are supported: the client declares no tools" }).nullish(),
  function_call: z.enum(['none', 'auto'], { error: "Only 'none' and 'auto' are supported" }).nullish(),
  ...ignored,
})
export type TChatCompletionRequest = z.infer<typeof ChatCompletionRequest>

/** A Responses input content part: `input_text` (or `output_text` in an assistant item). */
const InputTextPart = z.object({
  type: z.enum(['input_text', 'output_text'], { error: 'Only text content parts are supported' }),
  text: MessageText,
})

/** A Responses input message item (`type: 'message'` or an easy input message without `type`). */
export const ResponseInputItem = z.object({
  type: z.literal('message', { error: 'Only message and mcp_approval_response items are supported: the agent runs its own tools' }).optional(),
  role: z.enum(['system', 'developer', 'user', 'assistant'], { error: ROLE_ERROR }),
  content: z.union([MessageText, z.array(InputTextPart).min(1)]),
  id: z.string().optional(),
  status: z.string().optional(),
})
export type TResponseInputItem = z.infer<typeof ResponseInputItem>

/**
 * A person's decision on an `mcp_approval_request` of the previous response (docs/api/openai.md,
 * "Approvals"): OpenAI's own item, so the SDK needs nothing new.
 */
export const ApprovalResponseItem = z.object({
  type: z.literal('mcp_approval_response'),
  approval_request_id: z.uuid(),
  approve: z.boolean(),
  reason: z.string().max(2_000).nullish(),
  id: z.string().nullish(),
})
export type TApprovalResponseItem = z.infer<typeof ApprovalResponseItem>

/** One input item: an approval response when it says so, else a message item (whose errors name its fields). */
const inputEntry = z.custom<TResponseInputItem | TApprovalResponseItem>().superRefine((value, ctx) => {
  const schema = typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'mcp_approval_response' ? ApprovalResponseItem : ResponseInputItem
  const parsed = schema.safeParse(value)
  if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', path: issue.path } as never)
})

const ignoredResponse = {
  temperature: ignored.temperature,
  top_p: ignored.top_p,
  max_output_tokens: z.number().int().min(1).nullish(),
  user: ignored.user,
  store: ignored.store,
  service_tier: ignored.service_tier,
  parallel_tool_calls: ignored.parallel_tool_calls,
  reasoning: z.object({ effort: z.string().nullish(), summary: z.string().nullish() }).nullish(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  prompt_cache_key: ignored.prompt_cache_key,
  safety_identifier: ignored.safety_identifier,
  top_logprobs: ignored.top_logprobs,
  include: z.array(z.string()).max(0, 'No include values are available for agents').nullish(),
}
/** The Responses parameters accepted and ignored (docs/api/openai.md). */
export const IGNORED_RESPONSE_PARAMS = Object.keys(ignoredResponse)

/** `POST /api/v1/openai/responses`. */
export const ResponseRequest = z.strictObject({
  model: z.string().min(1).max(200),
  input: z.union([MessageText.min(1), z.array(inputEntry).min(1, 'Send at least one input item')]),
  instructions: MessageText.nullish(),
  previous_response_id: z.string().regex(/^resp_[0-9a-f-]{36}$/i, 'Must be the id of a response (resp_...)').nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_obfuscation: z.boolean().optional() }).nullish(),
  metadata: Metadata.nullish(),
  background: z.literal(false, { error: 'Background responses are not supported; use stream' }).nullish(),
  text: z.object({ format: z.object({ type: z.literal('text', { error: "Only the 'text' format is supported" }) }).optional() }).nullish(),
  tools: noTools,
  tool_choice: ChatCompletionRequest.shape.tool_choice,
  ...ignoredResponse,
})
export type TResponseRequest = z.infer<typeof ResponseRequest>

/** The text of a message's content: a string, or its parts' texts joined. */
export function contentText(content: string | { text: string }[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('')
}

/**
 * A zod issue path in OpenAI's `param` notation: `messages[1].content`.
 */
export function paramOf(path: readonly PropertyKey[]): string {
  let out = ''
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`
  return out
}
