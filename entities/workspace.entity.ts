import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { timestamps } from './columns.ts'
import { uuidv7 } from 'uuidv7'
import { User } from './user.entity.ts'

/** Free-form workspace metadata; its wire shape is `WorkspaceMetadata` in src/schemas. */
export type WorkspaceMetadataValue = Record<string, unknown>

/** A tenant (`workspaces`): every resource belongs to one. Soft-deleted through `deleted_at`. */
export const Workspace = defineEntity({
  name: 'Workspace',
  tableName: 'workspaces',
  indexes: [{ properties: ['user'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique().onCreate(() => uuidv7()),
    slug: p.string().length(80).unique(),
    name: p.string().length(255),
    profilePhotoKey: p.string().length(512).nullable().fieldName('profile_photo_key'),
    serviceId: p.string().length(64).nullable().fieldName('service_id'),
    isOnboarded: p.boolean().fieldName('is_onboarded').default(false),
    metadata: p.json<WorkspaceMetadataValue>().default('{}'),
    user: () =>
      p.manyToOne(User)
      .fieldName('user_id')
      .deleteRule('cascade'),
    ...timestamps(),
    deletedAt: p.datetime().nullable().fieldName('deleted_at'),
  },
})

export type IWorkspace = InferEntity<typeof Workspace>
