import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { timestamps } from './columns.ts'
import { User, Workspace } from './user-workspace.entity.ts'

/** Roles of a workspace member, strongest first (docs/api/tenancy.md). */
export const WORKSPACE_ROLES = ['owner', 'admin', 'member'] as const
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number]

/** Membership of a user in a workspace (`workspace_members`), one row per pair. */
export const WorkspaceMember = defineEntity({
  name: 'WorkspaceMember',
  tableName: 'workspace_members',
  uniques: [{ properties: ['workspace', 'user'] }],
  indexes: [{ properties: ['user'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    workspace: () =>
      p.manyToOne(Workspace)
      .fieldName('workspace_id')
      .deleteRule('cascade'),
    user: () =>
      p.manyToOne(User)
      .fieldName('user_id')
      .deleteRule('cascade'),
    role: p.enum(WORKSPACE_ROLES),
    ...timestamps(),
  },
})

export type IWorkspaceMember = InferEntity<typeof WorkspaceMember>
