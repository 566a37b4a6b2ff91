/**
 * The owner (`user_id`) and tenant (`workspace_id`) columns of tenant-owned rows
 * (docs/api/tenancy.md), as relations to users and workspaces.
 */
import { p } from '@mikro-orm/core'
import { User, Workspace } from './user-workspace.entity.ts'

/** `workspace_id`, the tenant of a row, deleted with its workspace. */
const tenant = () =>
  p.manyToOne(Workspace)
    .fieldName('workspace_id')
    .deleteRule('cascade')

/** Owner (`user_id`) and tenant (`workspace_id`) of a tenant-owned row (docs/api/tenancy.md). */
export const ownership = () => ({
  user: () =>
    p.manyToOne(User)
      .fieldName('user_id')
      .deleteRule('cascade'),
  workspace: tenant,
})

/**
 * As {@link ownership}, both optional: rows seeded by the service have neither (the built-in
 * providers).
 */
export const optionalOwnership = () => ({
  user: () =>
    p.manyToOne(User)
      .nullable()
      .fieldName('user_id')
      .deleteRule('cascade'),
  workspace: () => tenant().nullable(),
})

/**
 * Tenant (`workspace_id`) of a record of something that happened (messages, workflow
 * executions) and the user who caused it (`user_id`), if any: the record outlives its user.
 */
export const recordOwnership = () => ({
  user: () =>
    p.manyToOne(User)
      .fieldName('user_id')
      .nullable()
      .deleteRule('set null'),
  workspace: tenant,
})
