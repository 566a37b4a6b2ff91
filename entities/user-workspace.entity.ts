/**
 * The owner and the tenant: a user (`users`) and a workspace (`workspaces`) name each other
 * (`users.primary_workspace_id`, `workspaces.user_id`), so the two are defined in one module and
 * the entities import no circle (docs/architecture.md, "Rules").
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { uuidv7 } from 'uuidv7'
import { timestamps } from './columns.ts'

/** A person who signs in (`users`). `id` is the integer the specification exposes. */
export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  // One account per e-mail within a service scope (docs/api/authentication.md); NULL service_id is its own scope.
  uniques: [
    {
      name: 'users_service_id_email_unique',
      expression: `create unique index "users_service_id_email_unique" on "users" (coalesce("service_id", ''), "email")`,
    },
  ],
  properties: {
    id: p.integer().primary().autoincrement(),
    name: p.string().length(255),
    firstName: p.string().length(255).fieldName('first_name'),
    lastName: p.string().length(255).fieldName('last_name'),
    /** Stored trimmed and lower-cased; unique per service_id (see the migration's expression index). */
    email: p.string().length(320),
    passwordHash: p.string().length(255).fieldName('password_hash').hidden().lazy(),
    profilePhotoKey: p.string().length(512).nullable().fieldName('profile_photo_key'),
    serviceId: p.string().length(64).nullable().fieldName('service_id'),
    primaryWorkspace: () =>
      p.manyToOne(Workspace)
      .nullable()
      .fieldName('primary_workspace_id')
      .deleteRule('set null'),
    ...timestamps(),
  },
})

export type IUser = InferEntity<typeof User>

/** Free-form workspace metadata; its wire shape is `WorkspaceMetadata` in src/access/user-workspace.schema.ts. */
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
