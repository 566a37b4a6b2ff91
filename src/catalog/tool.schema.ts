/**
 * Tool wire shapes (specification: "Tool (element of Agent.tools)"; docs/api/resources.md) and the
 * row -> wire mapper. `pivot_account` appears on an agent's tools only.
 */
import { z } from 'zod'
import { TOOL_METHODS, TOOL_TYPES, type ToolMethod, type ToolType } from '../../entities/index.ts'
import { MediaKey, ProfilePhotoConfig, ProfilePhotoConfigInput, toProfilePhotoConfig, Visibility, type ResourceRow } from '../access/resource.schema.ts'
import { iso, jsonBoolean, jsonBytes, name, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'
import { mediaUrl } from '../access/user-workspace.schema.ts'

/** Columns of `tools` a mapper reads (see `selectColumns` in src/platform/sql.ts). */
export const TOOL_FIELDS = [
  'id', 'uuid', 'name', 'description', 'type', 'profilePhotoKey', 'profilePhotoConfig', 'visibility', 'credits',
  'metadata', 'method', 'url', 'inputSchema', 'allowedTools', 'requiresApproval', 'idempotent', 'providerId', 'userId', 'workspaceId', 'createdAt', 'updatedAt',
] as const

/** A `tools` row as raw SQL reads it with {@link TOOL_FIELDS}, plus its provider's keys. */
export interface ToolRow extends ResourceRow {
  type: ToolType
  credits: number | string
  metadata: Record<string, unknown>
  method: ToolMethod
  url: string
  inputSchema: Record<string, unknown>
  allowedTools: string[] | null
  requiresApproval: boolean
  idempotent: boolean
  providerId: number | null
  providerUuid?: string | null
  providerSlug?: string | null
  providerName?: string | null
}

/** The provider a tool calls, as embedded in a tool. */
export const ToolProvider = z.object({ uuid: z.uuid(), slug: z.string(), name: z.string() })

/** A tool as answered by the tools endpoints and inside agents. */
export const Tool = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    description: z.string(),
    type: z.string(),
    profile_photo_url: z.string().nullable(),
    profile_photo_config: ProfilePhotoConfig,
    visibility: Visibility,
    credits: z.number(),
    is_owner: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
    method: z.string(),
    url: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
    /** `mcp` tools: the server's tools offered to the model (null: all); always null for `api` tools. */
    allowed_tools: z.array(z.string()).nullable(),
    /** Every call of the tool by a run waits for a person's approval (docs/api/runs.md, "Approvals"). */
    requires_approval: z.boolean(),
    /**
     * Calls of the tool are safe to repeat: one whose result was lost when its run's process died is
     * made again, with the same `Idempotency-Key` (docs/api/runs.md, "Interrupted runs").
     */
    idempotent: z.boolean(),
    provider: ToolProvider.nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Tool' })
export type TTool = z.infer<typeof Tool>

/** The account an agent calls a tool with (`pivot_account`); never the secret, only its hint. */
export const PivotAccount = z
  .object({ uuid: z.uuid(), name: z.string(), provider_uuid: z.uuid(), secret_hint: z.string().nullable() })
  .meta({ id: 'PivotAccount' })
export type TPivotAccount = z.infer<typeof PivotAccount>

/** An element of `Agent.tools`. */
export const AgentTool = Tool.extend({ pivot_account: PivotAccount.nullable() }).meta({ id: 'AgentTool' })
export type TAgentTool = z.infer<typeof AgentTool>

/** The account bound to an agent's tool as read (null fields when none is bound or it is gone). */
export interface PivotAccountRow {
  accountUuid: string | null
  accountName: string | null
  accountProviderUuid: string | null
  accountSecretHint: string | null
}

/** A tool bound to an agent as read: the tool's columns, its provider's keys and the bound account's. */
export interface AgentToolRow extends ToolRow, PivotAccountRow {}

/** Row -> wire. */
export function toTool(row: ToolRow, viewerId: number, appUrl: string): TTool {
  return {
    uuid: row.uuid,
    name: row.name,
    description: row.description,
    type: row.type,
    profile_photo_url: mediaUrl(appUrl, row.profilePhotoKey),
    profile_photo_config: toProfilePhotoConfig(row.profilePhotoConfig) ?? {},
    visibility: row.visibility,
    credits: Number(row.credits),
    is_owner: row.userId === viewerId,
    metadata: row.metadata,
    method: row.method,
    url: row.url,
    input_schema: row.inputSchema,
    allowed_tools: row.allowedTools ?? null,
    requires_approval: row.requiresApproval === true,
    idempotent: row.idempotent === true,
    provider: row.providerUuid ? { uuid: row.providerUuid, slug: row.providerSlug ?? '', name: row.providerName ?? '' } : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** Row -> `pivot_account`: null when no account is bound, it is gone, or its provider is. */
export function toPivotAccount(row: PivotAccountRow): TPivotAccount | null {
  return row.accountUuid && row.accountProviderUuid
    ? { uuid: row.accountUuid, name: row.accountName ?? '', provider_uuid: row.accountProviderUuid, secret_hint: row.accountSecretHint }
    : null
}

/**
 * An element of `Agent.tools` from a tool already mapped by {@link toTool}: a list maps each
 * distinct tool of a page once and adds each link's account here.
 */
export function withPivotAccount(tool: TTool, pivotAccount: TPivotAccount | null): TAgentTool {
  return { ...tool, pivot_account: pivotAccount }
}

/** Row -> an element of `Agent.tools`: the tool and its `pivot_account` (see {@link toPivotAccount}). */
export function toAgentTool(row: AgentToolRow, viewerId: number, appUrl: string): TAgentTool {
  return withPivotAccount(toTool(row, viewerId, appUrl), toPivotAccount(row))
}

// ---------------------------------------------------------------------------------------------
// Inputs of the tools endpoints (docs/api/resources.md, "Tools").

/** Sortable columns of the tool list. */
export const TOOL_SORTS = ['created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at'] as const
/** Largest `input_schema` and `metadata`, serialized as JSON, in bytes (64 KiB). */
export const TOOL_JSON_MAX_BYTES = 64 * 1024
/** Deepest nesting accepted inside `input_schema` and `metadata`. */
export const TOOL_JSON_MAX_DEPTH = 16
/** Largest `credits`. */
export const TOOL_CREDITS_MAX = 1_000_000

/**
 * A JSON number within [min, max] with at most 4 decimal places (the column is numeric(12,4));
 * a pipe, so strings are not coerced in JSON bodies (see `jsonInt` in ./wire.ts).
 */
const jsonDecimal = (min: number, max: number) =>
  z.number().pipe(
    z
      .number()
      .min(min)
      .max(max)
      .refine((value) => Number(value.toFixed(4)) === value, 'at most 4 decimal places'),
  )

/** A `{{name}}` placeholder of a URL template. */
const PLACEHOLDER = /\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}/g

/**
 * What is wrong with a tool URL template, or null: an absolute http(s) URL whose path and query
 * may hold `{{name}}` placeholders (never its scheme or host).
 */
function urlTemplateProblem(value: string): string | null {
  const origin = /^https?:\/\/([^/?#]*)/i.exec(value)
  if (!origin) return 'must be an absolute http or https URL'
  if (/[{}]/.test(origin[1])) return 'placeholders are allowed in the path and query only'
  const filled = value.replace(PLACEHOLDER, 'x')
  if (filled.includes('{{') || filled.includes('}}')) return 'placeholders are {{name}}: a letter or "_", then letters, digits or "_.-"'
  if (!URL.canParse(filled)) return 'must be an absolute http or https URL'
  return new URL(filled).hostname ? null : 'must be an absolute http or https URL'
}

/** A tool's `url`: an http(s) URL template of at most 2048 characters. */
export const UrlTemplate = text(2048, 1)
  .superRefine((value, ctx) => {
    const problem = urlTemplateProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
  .meta({ format: 'uri', description: 'An absolute http(s) URL; `{{name}}` placeholders are allowed in its path and query.' })

/** Problems of a JSON value PostgreSQL's jsonb must store: NUL or lone surrogates, nesting depth. */
function checkStorableJson(value: unknown, ctx: z.RefinementCtx, path: (string | number)[], depth: number): boolean {
  const badText = (text: string) => text.includes('\u0000') || !text.isWellFormed()
  if (typeof value === 'string') {
    if (!badText(value)) return true
    ctx.addIssue({ code: 'custom', path, message: 'must not hold NUL characters or lone surrogates' })
    return false
  }
  if (value === null || typeof value !== 'object') return true
  if (depth > TOOL_JSON_MAX_DEPTH) {
    ctx.addIssue({ code: 'custom', message: `must not nest deeper than ${TOOL_JSON_MAX_DEPTH} levels` })
    return false
  }
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value)
  for (const [key, item] of entries) {
    if (typeof key === 'string' && badText(key)) {
      ctx.addIssue({ code: 'custom', path, message: 'keys must not hold NUL characters or lone surrogates' })
      return false
    }
    if (!checkStorableJson(item, ctx, [...path, key], depth + 1)) return false
  }
  return true
}

/** A JSON object of at most 64 KiB that jsonb can store (`input_schema`, `metadata`). */
const jsonObject = () =>
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (!checkStorableJson(value, ctx, [], 1)) return
    if (jsonBytes(value) > TOOL_JSON_MAX_BYTES) {
      ctx.addIssue({ code: 'custom', message: `must not exceed ${TOOL_JSON_MAX_BYTES} bytes as JSON` })
    }
  })

/**
 * `input_schema`: a JSON Schema object (draft-07, as Ajv reads it) describing the tool's
 * arguments; the service also compiles it. Its top-level `type`, when present, is `object`.
 */
export const ToolInputSchema = jsonObject().superRefine((value, ctx) => {
  if ('type' in value && value.type !== 'object') {
    ctx.addIssue({ code: 'custom', path: ['type'], message: 'a tool takes named arguments: the top-level type must be "object"' })
  }
})

/** Tool `metadata`: any JSON object of at most 64 KiB; an update merges it key by key (`null` removes a key). */
const ToolMetadata = jsonObject()

/** Most names in an `mcp` tool's `allowed_tools`. */
export const TOOL_ALLOWED_MAX = 100

/**
 * `allowed_tools` of an `mcp` tool: distinct names of the server's tools (MCP tool names are 1..128
 * characters), at most {@link TOOL_ALLOWED_MAX}.
 */
const AllowedTools = z
  .array(text(128, 1))
  .max(TOOL_ALLOWED_MAX)
  .superRefine((names, ctx) => {
    const seen = new Set<string>()
    names.forEach((name, index) => {
      if (seen.has(name)) ctx.addIssue({ code: 'custom', path: [index], message: `"${name}" is listed twice` })
      seen.add(name)
    })
  })

/** Create body (plus the workspace context's `workspace_uuid`). */
export const CreateToolInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(),
  description: text(2000).nullable().optional(),
  type: z.enum(TOOL_TYPES).optional(),
  provider_uuid: z.uuid().nullable().optional(),
  method: z.enum(TOOL_METHODS).optional(),
  url: UrlTemplate,
  input_schema: ToolInputSchema.optional(),
  allowed_tools: AllowedTools.nullable().optional(),
  requires_approval: jsonBoolean().optional(),
  idempotent: jsonBoolean().optional(),
  credits: jsonDecimal(0, TOOL_CREDITS_MAX).optional(),
  profile_photo_key: MediaKey.nullable().optional(),
  profile_photo_config: ProfilePhotoConfigInput.nullable().optional(),
  visibility: Visibility.optional(),
  metadata: ToolMetadata.optional(),
})
export type TCreateToolInput = z.infer<typeof CreateToolInput>

/**
 * `PUT /api/v1/tools/{tool_uuid}`: the create fields, all optional. Omitted fields are kept;
 * `null` clears `description`, `provider_uuid`, `allowed_tools`, `profile_photo_key` and `profile_photo_config`;
 * `input_schema` replaces the whole schema; `metadata` merges key by key.
 */
export const UpdateToolInput = z.strictObject({ tool_uuid: z.uuid(), ...CreateToolInput.partial().shape })
export type TUpdateToolInput = z.infer<typeof UpdateToolInput>

/** Path of retrieve and delete (plus the workspace context). */
export const ToolPathInput = z.strictObject({ tool_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** List query. */
export const ToolListInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(TOOL_SORTS, '-created_at'),
  search: text(255).optional(),
  visibility: Visibility.optional(),
  provider_uuid: z.uuid().optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TToolListInput = z.infer<typeof ToolListInput>
