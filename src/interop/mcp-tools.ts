/**
 * The pure half of the MCP server's tools (docs/api/mcp.md, "Tools"): their names, and the JSON
 * Schemas of their arguments and structured results. No database, no network; the listing and
 * the calls are ./mcp-server.service.ts.
 *
 * Names follow the MCP tool name rule (`^[a-zA-Z0-9_-]{1,64}$`): `<kind>_<slug>_<id>`, where
 * `kind` is `agent`, `prompt` or `workflow`, `slug` is the resource's name in lower-case letters,
 * digits and `_` (left out when nothing is left of it), and `id` the last 8 hex digits of its
 * uuid (random in both uuid v4 and v7), or all 32 when two resources of a kind the caller sees
 * share those 8. A name therefore stays the same from one listing to the next, and a call is
 * matched by kind and `id`, so renaming a resource does not break a client that listed it
 * before.
 */
import type { TPromptInputField } from '../prompts/index.ts'
import { PROMPT_TEXT_INPUT_MAX } from '../prompts/index.ts'
import { RUN_INPUT_MAX } from '../runs/index.ts'

/** What a tool runs. */
export type McpToolKind = 'agent' | 'prompt' | 'workflow'

/** A JSON Schema object, as MCP's `inputSchema` and `outputSchema` carry it. */
export type ObjectSchema = { type: 'object'; properties?: Record<string, object>; required?: string[] } & Record<string, unknown>

/** Longest tool name MCP allows. */
const NAME_MAX = 64
/** Hex digits of the uuid a name ends with, unless two resources share them. */
const SHORT_ID = 8

/** A name this server could have given: its kind and its id part (8 or 32 hex digits). */
const OUR_NAME = /^(agent|prompt|workflow)_(?:[a-z0-9_]*_)?([0-9a-f]{8}|[0-9a-f]{32})$/

/** `uuid` without its dashes. */
export const hexOf = (uuid: string): string => uuid.replaceAll('-', '').toLowerCase()

/** The kind and id part of `name` if this server could have named a tool so, else null. */
export function parseToolName(name: string): { kind: McpToolKind; id: string } | null {
  const match = OUR_NAME.exec(name)
  if (!match) return null
  const kind = match[1] === 'agent' ? 'agent' : match[1] === 'prompt' ? 'prompt' : 'workflow'
  return { kind, id: match[2] }
}

/** `name` as the slug of a tool name: lower-case letters, digits and single `_`, at most `max` characters. */
function slugOf(name: string, max: number): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
  return slug.slice(0, max).replace(/_+$/, '')
}

/**
 * The tool names of `rows`, all of one `kind`, in order (module comment): a resource whose last
 * 8 hex digits another of `rows` shares gets all 32.
 */
export function toolNames(kind: McpToolKind, rows: readonly { uuid: string; name: string }[]): string[] {
  const seen = new Map<string, number>()
  for (const row of rows) {
    const short = hexOf(row.uuid).slice(-SHORT_ID)
    seen.set(short, (seen.get(short) ?? 0) + 1)
  }
  return rows.map((row) => {
    const hex = hexOf(row.uuid)
    const id = (seen.get(hex.slice(-SHORT_ID)) ?? 0) > 1 ? hex : hex.slice(-SHORT_ID)
    const slug = slugOf(row.name, NAME_MAX - kind.length - id.length - 2)
    return slug ? `${kind}_${slug}_${id}` : `${kind}_${id}`
  })
}

/** An agent tool's arguments: the user's message and, to continue one, the caller's thread of that agent. */
export const AGENT_INPUT_SCHEMA: ObjectSchema = {
  type: 'object',
  properties: {
    message: { type: 'string', minLength: 1, maxLength: RUN_INPUT_MAX, description: "The user's message to the agent" },
    thread_uuid: {
      type: 'string',
      format: 'uuid',
      description: 'A thread of yours with this agent to continue (the thread_uuid of an earlier call); a new thread when left out',
    },
    if_busy: {
      type: 'string',
      enum: ['enqueue', 'reject', 'interrupt'],
      description: 'When the thread is still busy with an earlier run: enqueue (default) runs after it, reject refuses, interrupt cancels it',
    },
  },
  required: ['message'],
  additionalProperties: false,
}

const USAGE_SCHEMA = {
  type: 'object',
  properties: {
    prompt_tokens: { type: 'integer' },
    completion_tokens: { type: 'integer' },
    total_tokens: { type: 'integer' },
    cost: { type: 'number', description: 'US dollars' },
  },
  required: ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost'],
}

/** The structured result of an agent or prompt tool: the stored run. */
export const RUN_OUTPUT_SCHEMA: ObjectSchema = {
  type: 'object',
  properties: {
    run_uuid: { type: 'string', format: 'uuid' },
    thread_uuid: { type: ['string', 'null'], description: 'The thread of an agent run (continue it with thread_uuid); null for a prompt run' },
    status: { type: 'string', enum: ['queued', 'running', 'awaiting_approval', 'succeeded', 'failed', 'canceled'] },
    output: { type: ['string', 'null'] },
    usage: USAGE_SCHEMA,
    approvals: {
      type: 'array',
      description: 'With status awaiting_approval: the tool calls that wait for a person (decide them with POST /api/v1/approvals/{uuid}/approve or /deny)',
      items: { type: 'object' },
    },
  },
  required: ['run_uuid', 'thread_uuid', 'status', 'output', 'usage'],
}

/** The structured result of a workflow tool: the stored execution. */
export const EXECUTION_OUTPUT_SCHEMA: ObjectSchema = {
  type: 'object',
  properties: {
    execution_uuid: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
    output: { description: "The execution's output (any JSON)" },
    error: {
      type: ['object', 'null'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, node_id: { type: ['string', 'null'] } },
    },
  },
  required: ['execution_uuid', 'status', 'output', 'error'],
}

/** The JSON Schema of one declared prompt input (docs/api/resources.md; checked by src/prompts/prompt-render.ts). */
function inputFieldSchema(field: TPromptInputField): Record<string, unknown> {
  const described = { title: field.label, description: field.label }
  switch (field.type) {
    case 'number':
      return { ...described, type: 'number' }
    case 'boolean':
      return { ...described, type: 'boolean' }
    case 'date':
      return { ...described, type: 'string', format: 'date' }
    case 'select':
      return { ...described, type: 'string', enum: field.options ?? [] }
    case 'multiselect':
      return { ...described, type: 'array', items: { type: 'string', enum: field.options ?? [] }, uniqueItems: true }
    default:
      return { ...described, type: 'string', maxLength: PROMPT_TEXT_INPUT_MAX }
  }
}

/** A prompt tool's arguments: its declared inputs, by key; the required ones required, no others. */
export function promptInputSchema(fields: readonly TPromptInputField[]): ObjectSchema {
  const required = fields.filter((field) => field.required).map((field) => field.key)
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((field) => [field.key, inputFieldSchema(field)])),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  }
}
