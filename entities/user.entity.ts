import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { timestamps } from './columns.ts'
import { Workspace } from './workspace.entity.ts'

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
