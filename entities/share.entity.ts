import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { timestamps } from './columns.ts'

/** Whom a resource is shared with (docs/api/tenancy.md). */
export const SHARE_ENTITY_TYPES = ['user', 'workspace'] as const
export type ShareEntityType = (typeof SHARE_ENTITY_TYPES)[number]

/** Share permissions, weakest first: `read` (view, run, duplicate), `write` (also update), `admin` (also share, delete). */
export const SHARE_PERMISSIONS = ['read', 'write', 'admin'] as const
export type SharePermission = (typeof SHARE_PERMISSIONS)[number]

/**
 * A grant of one resource to a user or a workspace (`shares`). Polymorphic on purpose: every
 * shareable table (agents, prompts, workflows, ...) uses this one table, so `src/access` can
 * express the share rule once. `resource_type` is the table name, `resource_id` its primary key;
 * `entity_id` is a user id or a workspace id.
 */
export const Share = defineEntity({
  name: 'Share',
  tableName: 'shares',
  uniques: [{ properties: ['resourceType', 'resourceId', 'entityType', 'entityId'] }],
  indexes: [{ properties: ['entityType', 'entityId', 'resourceType'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    resourceType: p.string().length(64).fieldName('resource_type'),
    resourceId: p.bigint('number').fieldName('resource_id'),
    entityType: p.enum(SHARE_ENTITY_TYPES).fieldName('entity_type'),
    entityId: p.bigint('number').fieldName('entity_id'),
    permission: p.enum(SHARE_PERMISSIONS),
    ...timestamps(),
  },
})

export type IShare = InferEntity<typeof Share>
