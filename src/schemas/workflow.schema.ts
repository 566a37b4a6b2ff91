/**
 * Workflow wire shapes (specification: "Workflow (element of Agent.workflows)") and the
 * row -> wire mapper.
 */
import { z } from 'zod'
import type { ProfilePhotoConfigValue, Visibility } from '../../entities/index.ts'
import { ProfilePhotoConfig, toProfilePhotoConfig } from './resource.schema.ts'
import { iso, isoOrNull, timestamp } from './wire.ts'
import { mediaUrl } from './workspace.schema.ts'

/** Columns of `workflows` a mapper reads (see `selectColumns` in src/services/sql.ts). */
export const WORKFLOW_FIELDS = [
  'id', 'uuid', 'name', 'description', 'profilePhotoKey', 'profilePhotoConfig', 'visibility', 'isActive', 'isTemplate',
  'nodes', 'edges', 'settings', 'staticData', 'pinData', 'triggerCount', 'userId', 'workspaceId', 'createdAt',
  'updatedAt', 'deletedAt',
] as const

/** A `workflows` row as raw SQL reads it with {@link WORKFLOW_FIELDS}. */
export interface WorkflowRow {
  id: number
  uuid: string
  name: string
  description: string
  profilePhotoKey: string | null
  profilePhotoConfig: ProfilePhotoConfigValue | null
  visibility: Visibility
  isActive: boolean
  isTemplate: boolean
  nodes: unknown[]
  edges: unknown[]
  settings: Record<string, unknown>
  staticData: Record<string, unknown>
  pinData: Record<string, unknown>
  triggerCount: number
  userId: number
  workspaceId: number
  createdAt: Date | string
  updatedAt: Date | string
  deletedAt: Date | string | null
}

/** The Workflow shape of the specification (as an element of `Agent.workflows`). */
export const WorkflowBase = z.object({
  uuid: z.uuid(),
  name: z.string(),
  description: z.string(),
  profile_photo_url: z.string().nullable(),
  profile_photo_config: ProfilePhotoConfig,
  visibility: z.string(),
  is_active: z.boolean(),
  is_owner: z.boolean(),
  is_template: z.boolean(),
  nodes: z.array(z.unknown()),
  edges: z.array(z.unknown()),
  settings: z.record(z.string(), z.unknown()),
  static_data: z.record(z.string(), z.unknown()),
  pin_data: z.record(z.string(), z.unknown()),
  trigger_count: z.number().int(),
  created_at: timestamp(),
  updated_at: timestamp(),
  deleted_at: timestamp().nullable(),
})
/** A workflow inside an agent. */
export const AgentWorkflow = WorkflowBase.meta({ id: 'AgentWorkflow' })
export type TWorkflowBase = z.infer<typeof WorkflowBase>

/** Row -> the specification's Workflow fields. */
export function toWorkflowBase(row: WorkflowRow, viewerId: number, appUrl: string): TWorkflowBase {
  return {
    uuid: row.uuid,
    name: row.name,
    description: row.description,
    profile_photo_url: mediaUrl(appUrl, row.profilePhotoKey),
    profile_photo_config: toProfilePhotoConfig(row.profilePhotoConfig) ?? {},
    visibility: row.visibility,
    is_active: row.isActive,
    is_owner: row.userId === viewerId,
    is_template: row.isTemplate,
    nodes: row.nodes,
    edges: row.edges,
    settings: row.settings,
    static_data: row.staticData,
    pin_data: row.pinData,
    trigger_count: Number(row.triggerCount),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    deleted_at: isoOrNull(row.deletedAt),
  }
}
