/**
 * Message wire shapes (docs/api/resources.md, "Messages") and the row -> wire mapper. A message
 * belongs to a thread and is seen by whoever sees its thread (docs/api/resources.md, "Threads").
 * `parts` is the structured form of a message: text, tool calls and tool results.
 */
import { selectColumns } from '../platform/sql.ts'
import { z } from 'zod'
import { MESSAGE_ROLES, type MessageRole } from '../../entities/index.ts'
import { refineStorableJson } from '../access/resource.schema.ts'
import { envelope, isRecord, iso, jsonBoolean, jsonBytes, jsonValueOf, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'
import { Citation, type TCitation } from '../knowledge/index.ts'

/** Longest message `content` (docs/api/resources.md bounds of `content`). */
export const MESSAGE_CONTENT_MAX = 100_000
/** Most `parts` of one message. */
export const MESSAGE_PARTS_MAX = 100
/** Largest `parts`, serialized as JSON, in bytes. */
export const MESSAGE_PARTS_MAX_BYTES = 512 * 1024

/** An element of `parts` as answered. */
export const MessagePart = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('text'), text: z.string() }),
    z.object({ type: z.literal('tool-call'), tool_call_id: z.string(), tool_name: z.string(), input: z.unknown() }),
    z.object({
      type: z.literal('tool-result'),
      tool_call_id: z.string(),
      tool_name: z.string(),
      output: z.unknown(),
      is_error: z.boolean(),
    }),
  ])
  .meta({ id: 'MessagePart' })
export type TMessagePart = z.infer<typeof MessagePart>

/** The Message shape. */
export const Message = z
  .object({
    uuid: z.uuid(),
    thread_uuid: z.uuid(),
    /** The run that wrote the message; null for messages added with `POST /api/v1/messages`. */
    run_uuid: z.uuid().nullable(),
    role: z.enum(MESSAGE_ROLES),
    content: z.string(),
    parts: z.array(MessagePart),
    model: z.string().nullable(),
    /** The agent's version that wrote an assistant message (docs/api/versions.md); null for other messages. */
    agent_version: z.number().int().nullable(),
    prompt_tokens: z.number().int().nullable(),
    completion_tokens: z.number().int().nullable(),
    total_tokens: z.number().int().nullable(),
    latency_ms: z.number().int().nullable(),
    /** In US dollars. */
    cost: z.number().nullable(),
    /** The knowledge chunks the answer was given (docs/api/knowledge.md, "In a run"); empty for others. */
    citations: z.array(Citation),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Message' })
export type TMessage = z.infer<typeof Message>

/** `{data: Message}`. */
export const MessageEnvelope = envelope(Message)

/** A message row as src/threads/messages.service.ts reads it (thread and run uuids joined). */
export interface MessageRow {
  id: number
  uuid: string
  threadUuid: string
  runUuid: string | null
  role: MessageRole
  content: string
  parts: unknown
  model: string | null
  agentVersion: number | null
  promptTokens: number | null
  completionTokens: number | null
  totalTokens: number | null
  latencyMs: number | null
  cost: number | string | null
  citations?: unknown
  createdAt: Date | string
  updatedAt: Date | string
}

const nullableNumber = (value: number | string | null): number | null => (value === null ? null : Number(value))
const stringOf = (value: unknown): string => (typeof value === 'string' ? value : '')

/**
 * Stored parts -> the answered parts: the three known kinds with their members (missing ones
 * filled: `''`, `null`, `is_error` false); anything else stored is left out.
 */
export function toMessageParts(stored: unknown): TMessagePart[] {
  if (!Array.isArray(stored)) return []
  const parts: TMessagePart[] = []
  for (const part of stored) {
    if (!isRecord(part)) continue
    if (part.type === 'text') parts.push({ type: 'text', text: stringOf(part.text) })
    else if (part.type === 'tool-call') {
      parts.push({ type: 'tool-call', tool_call_id: stringOf(part.tool_call_id), tool_name: stringOf(part.tool_name), input: part.input ?? null })
    } else if (part.type === 'tool-result') {
      parts.push({
        type: 'tool-result',
        tool_call_id: stringOf(part.tool_call_id),
        tool_name: stringOf(part.tool_name),
        output: part.output ?? null,
        is_error: part.is_error === true,
      })
    }
  }
  return parts
}

/** Stored citations -> the answered ones (anything malformed left out). */
function toCitations(stored: unknown): TCitation[] {
  const value = jsonValueOf(stored ?? null)
  if (!Array.isArray(value)) return []
  return value.filter(isRecord).map((c) => ({
    document_uuid: stringOf(c.document_uuid),
    chunk_uuid: stringOf(c.chunk_uuid),
    document_name: stringOf(c.document_name),
    score: typeof c.score === 'number' ? c.score : 0,
  }))
}

/** Row -> wire. */
export function toMessage(row: MessageRow): TMessage {
  return {
    uuid: row.uuid,
    thread_uuid: row.threadUuid,
    run_uuid: row.runUuid,
    role: row.role,
    content: row.content,
    parts: toMessageParts(row.parts),
    model: row.model,
    agent_version: nullableNumber(row.agentVersion),
    prompt_tokens: nullableNumber(row.promptTokens),
    completion_tokens: nullableNumber(row.completionTokens),
    total_tokens: nullableNumber(row.totalTokens),
    latency_ms: nullableNumber(row.latencyMs),
    cost: nullableNumber(row.cost),
    citations: toCitations(row.citations),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs of the messages endpoints.

/** Roles a client may add a message as (`tool` messages come from runs only). */
export const POSTABLE_ROLES = ['user', 'assistant', 'system'] as const
/** Sortable columns of the message list; oldest first by default. */
export const MESSAGE_SORTS = ['created_at', '-created_at'] as const

/** Message `content`: 1..100,000 characters, not only white space. */
export const MessageContent = text(MESSAGE_CONTENT_MAX, 1).refine((value) => value.trim().length > 0, 'must not be blank')

/** Kinds of message part. */
export const PART_TYPES = ['text', 'tool-call', 'tool-result'] as const
type PartType = (typeof PART_TYPES)[number]

/** The members each kind of part takes (besides `type`), and which of them it requires. */
const PART_MEMBERS: Record<PartType, { required: readonly string[]; optional: readonly string[] }> = {
  text: { required: ['text'], optional: [] },
  'tool-call': { required: ['tool_call_id', 'tool_name', 'input'], optional: [] },
  'tool-result': { required: ['tool_call_id', 'tool_name', 'output'], optional: ['is_error'] },
}

/** A JSON value (`input`, `output` of tool parts) that jsonb can store. */
const JsonValue = () => z.unknown().superRefine((value, ctx) => refineStorableJson(value, ctx))

/**
 * An element of `parts` as sent: `{type: "text", text}`, `{type: "tool-call", tool_call_id,
 * tool_name, input}` or `{type: "tool-result", tool_call_id, tool_name, output, is_error?}`.
 * One object checked member by member (rather than a discriminated union), so a bad or missing
 * `type` and a bad member are each named in `issues` (`parts.0.type`, `parts.0.text`).
 */
export const MessagePartInput = z
  .strictObject({
    type: z.enum(PART_TYPES),
    text: text(MESSAGE_CONTENT_MAX).optional(),
    tool_call_id: text(255, 1).optional(),
    tool_name: text(255, 1).optional(),
    input: JsonValue().optional(),
    output: JsonValue().optional(),
    is_error: jsonBoolean().optional(),
  })
  .superRefine((part, ctx) => {
    const members = PART_MEMBERS[part.type]
    for (const key of members.required) {
      if (part[key as keyof typeof part] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: `Required in a "${part.type}" part` })
    }
    for (const [key, value] of Object.entries(part)) {
      if (key === 'type' || value === undefined || members.required.includes(key) || members.optional.includes(key)) continue
      ctx.addIssue({ code: 'custom', path: [key], message: `Not a member of a "${part.type}" part` })
    }
  })
  .transform((part): TMessagePart => {
    if (part.type === 'text') return { type: 'text', text: part.text ?? '' }
    const ids = { tool_call_id: part.tool_call_id ?? '', tool_name: part.tool_name ?? '' }
    if (part.type === 'tool-call') return { type: 'tool-call', ...ids, input: part.input ?? null }
    return { type: 'tool-result', ...ids, output: part.output ?? null, is_error: part.is_error ?? false }
  })
  .meta({
    description:
      'One of `{type: "text", text}`, `{type: "tool-call", tool_call_id, tool_name, input}`, ' +
      '`{type: "tool-result", tool_call_id, tool_name, output, is_error?}` (is_error defaults to false).',
  })

/** `parts` as sent: at most 100 elements and 512 KiB of JSON. */
export const MessagePartsInput = z
  .array(MessagePartInput)
  .max(MESSAGE_PARTS_MAX)
  .superRefine((value, ctx) => {
    if (jsonBytes(value) > MESSAGE_PARTS_MAX_BYTES) {
      ctx.addIssue({ code: 'custom', message: `parts must not exceed ${MESSAGE_PARTS_MAX_BYTES} bytes as JSON` })
    }
  })

/**
 * `POST /api/v1/messages`: adds a message to a thread without running the model. Without
 * `parts` the message gets one text part holding `content`.
 */
export const CreateMessageInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  thread_uuid: z.uuid(),
  role: z.enum(POSTABLE_ROLES),
  content: MessageContent,
  parts: MessagePartsInput.optional(),
})
export type TCreateMessageInput = z.infer<typeof CreateMessageInput>

/** `PUT /api/v1/messages/{message_uuid}`: `content` only. */
export const UpdateMessageInput = z.strictObject({
  message_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  content: MessageContent,
})
export type TUpdateMessageInput = z.infer<typeof UpdateMessageInput>

/** Path of retrieve and delete (plus the workspace context). */
export const MessagePathInput = z.strictObject({ message_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** `GET /api/v1/messages` query: `thread_uuid` is required. */
export const MessageListInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(MESSAGE_SORTS, 'created_at'),
  thread_uuid: z.uuid(),
  search: text(255).optional(),
  workspace_uuid: z.uuid().optional(),
})
export type TMessageListInput = z.infer<typeof MessageListInput>

/** The stored {@link MessageRow} fields read as they are (`cost` is cast apart: numeric). */
// prettier-ignore
const MESSAGE_FIELDS = [
  'id', 'uuid', 'role', 'content', 'parts', 'model', 'agentVersion', 'promptTokens', 'completionTokens', 'totalTokens', 'latencyMs', 'citations', 'createdAt', 'updatedAt',
] as const

/**
 * The select list of a {@link MessageRow} as `"<prefix><field>"`, from the message (alias `m`)
 * and SQL expressions for its thread's and its run's uuids.
 */
export const messageColumns = (m: string, threadUuid: string, runUuid: string, prefix = ''): string =>
  `${selectColumns(m, prefix, MESSAGE_FIELDS)}, ${m}.cost::float8 as "${prefix}cost", ${threadUuid} as "${prefix}threadUuid", ${runUuid} as "${prefix}runUuid"`
