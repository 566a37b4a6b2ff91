/**
 * Asking a model for one JSON object that the caller checks: the mechanism behind
 * `POST /api/v1/workflows/generate` (docs/api/workflows.md, "Generating") and
 * `POST /api/v1/agents/generate` (docs/api/generate-and-leaderboard.md, "Generating an agent").
 *
 * - The model answers through the AI SDK's structured output: `generateText` with
 *   `Output.object` over the caller's JSON Schema, which OpenAI receives as
 *   `response_format: json_schema`. The schema is also written into the system prompt, because
 *   OpenAI-compatible servers only get `json_object` and would not see it otherwise.
 * - Not strict: OpenAI's strict mode accepts only a subset of JSON Schema (every property
 *   required, no length bounds, no open objects such as a node's `parameters`), and the caller's
 *   own check decides anyway. The schema guides the model; `check` judges the answer.
 * - The answer is parsed (prose or a Markdown code fence around the object is tolerated, for
 *   models that ignore the response format), its strings made storable, then `check`ed.
 * - When the check fails, the model is asked once more with its answer and the problems listed
 *   (a repair). The second check is final: the caller gets the problems and decides the error.
 * - The built-in local test model does not think: asking it is a 400 naming the request's model
 *   field. Provider faults are 502, no answer within `LLM_TIMEOUT_MS` a 504 (./complete.ts).
 */
import {
  generateText,
  jsonSchema,
  NoObjectGeneratedError,
  NoOutputGeneratedError,
  Output,
  type JSONSchema7,
  type ModelMessage,
  zodSchema,
} from 'ai'
import type { JSONSchema7Definition } from '@ai-sdk/provider'
import { z } from 'zod'
import type { Config } from '../platform/config.ts'
import { ValidationError, type FieldPath } from '../platform/errors.ts'
import { storableValue } from '../access/wire.ts'
import { modelCallError } from './complete.ts'
import type { ResolvedModel } from './registry.ts'

/** One problem of an answer, with its path into the answer (`nodes.2.parameters.url`). */
export interface AnswerIssue {
  path: FieldPath
  message: string
}

/** A checked answer: the value the caller will use, or every problem found. */
export type Checked<T> = { ok: true; value: T } | { ok: false; issues: AnswerIssue[] }

/** What to ask for and how to judge it. */
export interface StructuredAsk<T> {
  /** Names the object for providers that take a name (OpenAI's `json_schema.name`): letters, digits, `_`. */
  name: string
  /** What the answer must look like, as a zod schema; the model sees its JSON Schema (input side). */
  shape: z.ZodType
  /** The instructions; the JSON Schema is appended to them. */
  system: string
  /** The user's request, the first user message. */
  prompt: string
  /** Judges a parsed answer (strings already storable): the value, or its problems. */
  check: (value: unknown) => Checked<T>
  /** Most output tokens of one answer (capped by the model's own limit). */
  maxOutputTokens: number
  /** What the call is for, in messages: "design a workflow". */
  task: string
  /** The request field that chose the model, named when it is the local test model. */
  modelField: FieldPath
  /**
   * The caller's call signal: when it aborts (a client that disconnected), the model call under
   * way is aborted too and fails as a timeout would, so nothing is stored.
   */
  signal?: AbortSignal
  /** Told the tokens of each model call made (the first and the repair), for usage and budgets. */
  onUsage?: (tokens: { promptTokens: number; completionTokens: number }) => void
}

/** Most problems listed to the model in a repair, and in the caller's error. */
const MAX_LISTED_ISSUES = 20
/** Longest earlier answer sent back in a repair, in characters. */
const MAX_ECHOED_ANSWER = 40_000

/**
 * The JSON Schema of `shape` as the model is asked to satisfy it: the AI SDK's own conversion
 * (draft-07, the input side, objects closed unless the shape leaves them open), without its
 * validation: `check` judges answers, so the repair can list every problem.
 */
async function answerSchema(shape: z.ZodType): Promise<JSONSchema7> {
  const schema = withoutStringKeyNames(await zodSchema(shape).jsonSchema)
  return typeof schema === 'boolean' ? {} : schema
}

/**
 * `schema` without `propertyNames: {type: 'string'}` (what a zod record writes): every JSON key is
 * a string, so it says nothing, and OpenAI refuses the keyword (the SDK would warn on every call).
 */
function withoutStringKeyNames(schema: JSONSchema7Definition): JSONSchema7Definition {
  if (typeof schema === 'boolean') return schema
  const { propertyNames, ...rest } = schema
  const out: JSONSchema7 = typeof propertyNames === 'object' && propertyNames.type === 'string' ? rest : schema
  const one = (item: JSONSchema7Definition | undefined) => (item === undefined ? undefined : withoutStringKeyNames(item))
  const list = (items: JSONSchema7Definition[] | undefined) => items?.map(withoutStringKeyNames)
  const record = (items: Record<string, JSONSchema7Definition> | undefined) =>
    items && Object.fromEntries(Object.entries(items).map(([key, item]) => [key, withoutStringKeyNames(item)]))
  return {
    ...out,
    ...(out.properties && { properties: record(out.properties) }),
    ...(out.definitions && { definitions: record(out.definitions) }),
    ...(out.items !== undefined && { items: Array.isArray(out.items) ? list(out.items) : one(out.items) }),
    ...(out.additionalProperties !== undefined && { additionalProperties: one(out.additionalProperties) }),
    ...(out.anyOf && { anyOf: list(out.anyOf) }),
    ...(out.allOf && { allOf: list(out.allOf) }),
    ...(out.oneOf && { oneOf: list(out.oneOf) }),
  }
}

/** The JSON text of an answer: the body of its first Markdown code fence, else from the first `{` to the last `}`. */
function answerJson(text: string): string {
  const fenced = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/.exec(text)
  if (fenced) return fenced[1].trim()
  const start = text.indexOf('{')
  const end = text.lastIndexOf('}')
  return start >= 0 && end > start ? text.slice(start, end + 1) : text.trim()
}

/** Checks `value` with a zod schema: its output, or its issues with their paths. */
export function checkWith<S extends z.ZodType>(schema: S, value: unknown): Checked<z.output<S>> {
  const parsed = schema.safeParse(value)
  if (parsed.success) return { ok: true, value: parsed.data }
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key)),
    message: issue.message,
  }))
  return { ok: false, issues }
}

/** Problems as lines: `- nodes.2.parameters.url: Required`, at most {@link MAX_LISTED_ISSUES}. */
export function issueLines(issues: AnswerIssue[]): string {
  const lines = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((issue) => `- ${issue.path.length ? issue.path.join('.') : '(answer)'}: ${issue.message}`)
  if (issues.length > MAX_LISTED_ISSUES) lines.push(`- and ${issues.length - MAX_LISTED_ISSUES} more`)
  return lines.join('\n')
}

/** One answer: its text (what a repair echoes) and, when the SDK could parse it, its value. */
type Answer = { text: string; value?: unknown }

/** What every call of one generation sends: the system prompt, the conversation so far, the schema. */
interface Conversation {
  system: string
  messages: ModelMessage[]
  schema: JSONSchema7
}

/** The parsed output, or undefined when there is none (a JSON `null`, or an empty answer). */
function outputOf(result: { output: unknown }): unknown {
  try {
    return result.output
  } catch (error) {
    if (NoOutputGeneratedError.isInstance(error)) return undefined
    throw error
  }
}

/** One call of the model. @throws UpstreamError (502), UpstreamTimeoutError (504) */
async function askOnce<T>(
  model: ResolvedModel,
  config: Pick<Config, 'llm'>,
  ask: StructuredAsk<T>,
  request: Conversation,
): Promise<Answer> {
  let result
  try {
    result = await generateText({
      model: model.model,
      system: request.system,
      messages: request.messages,
      output: Output.object({ schema: jsonSchema(request.schema), name: ask.name }),
      providerOptions: { openai: { strictJsonSchema: false } },
      maxOutputTokens: Math.min(model.llm.maxOutputTokens || ask.maxOutputTokens, ask.maxOutputTokens),
      maxRetries: 0,
      abortSignal: ask.signal ? AbortSignal.any([AbortSignal.timeout(config.llm.timeoutMs), ask.signal]) : AbortSignal.timeout(config.llm.timeoutMs),
    })
  } catch (error) {
    // Not JSON at all (prose, a fenced block): kept for the tolerant parse and the repair.
    if (NoObjectGeneratedError.isInstance(error)) {
      ask.onUsage?.(tokensOf(error.usage))
      return { text: error.text ?? '' }
    }
    throw modelCallError(error, ask.task)
  }
  ask.onUsage?.(tokensOf(result.usage))
  const value = outputOf(result)
  return value === undefined || value === null ? { text: result.text } : { text: JSON.stringify(value), value }
}

/** Parses (when the SDK did not) and checks one answer. */
function checkAnswer<T>(ask: StructuredAsk<T>, answer: Answer): Checked<T> {
  let value = answer.value
  if (value === undefined) {
    try {
      value = JSON.parse(answerJson(answer.text))
    } catch {
      return { ok: false, issues: [{ path: [], message: 'The answer is not a JSON object' }] }
    }
  }
  return ask.check(storableValue(value))
}

/** The AI SDK's token counts of a call (0 when the provider sent none). */
const tokensOf = (usage: { inputTokens?: number; outputTokens?: number } | undefined) => ({
  promptTokens: usage?.inputTokens ?? 0,
  completionTokens: usage?.outputTokens ?? 0,
})

/**
 * Asks `model` for one JSON object and checks it, repairing once (module comment).
 * @returns the checked value, or the problems of the repaired answer (the caller decides the error).
 * @throws ValidationError naming `ask.modelField` for the local test model; UpstreamError (502)
 *   when the provider fails, UpstreamTimeoutError (504) past `LLM_TIMEOUT_MS` or once
 *   `ask.signal` aborted, on either call.
 */
export async function generateStructured<T>(model: ResolvedModel, config: Pick<Config, 'llm'>, ask: StructuredAsk<T>): Promise<Checked<T>> {
  if (model.driver === 'local') {
    throw new ValidationError(ask.modelField, `The local test model does not think and cannot ${ask.task}: choose another model`)
  }
  const schema = await answerSchema(ask.shape)
  const system = `${ask.system}\n\nThe answer is one JSON object satisfying this JSON Schema:\n${JSON.stringify(schema)}`
  const messages: ModelMessage[] = [{ role: 'user', content: ask.prompt }]
  const request = { system, messages, schema }
  const first = await askOnce(model, config, ask, request)
  const checked = checkAnswer(ask, first)
  if (checked.ok) return checked
  messages.push(
    { role: 'assistant', content: first.text.slice(0, MAX_ECHOED_ANSWER) },
    {
      role: 'user',
      content: `That answer has these problems:\n${issueLines(checked.issues)}\nAnswer with the corrected JSON object only.`,
    },
  )
  return checkAnswer(ask, await askOnce(model, config, ask, request))
}
