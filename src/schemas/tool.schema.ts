/**
 * Tool wire shapes (specification: "Tool (element of Agent.tools)"; API.md section 5) and the
 * row -> wire mapper. `pivot_account` appears on an agent's tools only.
 */
import { z } from 'zod'
import type { ProfilePhotoConfigValue, ToolMethod, ToolType, Visibility } from '../../entities/index.ts'
import { ProfilePhotoConfig, toProfilePhotoConfig } from './resource.schema.ts'
import { iso, timestamp } from './wire.ts'
import { mediaUrl } from './workspace.schema.ts'

/** Columns of `tools` a mapper reads (see `selectColumns` in src/services/sql.ts). */
export const TOOL_FIELDS = [
  'id', 'uuid', 'name', 'description', 'type', 'profilePhotoKey', 'profilePhotoConfig', 'visibility', 'credits',
  'metadata', 'method', 'url', 'inputSchema', 'providerId', 'userId', 'workspaceId', 'createdAt', 'updatedAt',
] as const

/** A `tools` row as raw SQL reads it with {@link TOOL_FIELDS}, plus its provider's keys. */
export interface ToolRow {
  id: number
  uuid: string
  name: string
  description: string
  type: ToolType
  profilePhotoKey: string | null
  profilePhotoConfig: ProfilePhotoConfigValue | null
  visibility: Visibility
  credits: number | string
  metadata: Record<string, unknown>
  method: ToolMethod
  url: string
  inputSchema: Record<string, unknown>
  providerId: number | null
  userId: number
  workspaceId: number
  createdAt: Date | string
  updatedAt: Date | string
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
    visibility: z.string(),
    credits: z.number(),
    is_owner: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
    method: z.string(),
    url: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
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
    provider: row.providerUuid ? { uuid: row.providerUuid, slug: row.providerSlug ?? '', name: row.providerName ?? '' } : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}
