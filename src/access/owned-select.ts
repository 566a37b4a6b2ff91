/**
 * Reading workspace-owned resources (prompts, datasets) with their creator and workspace embedded
 * on request (`with=user,workspace`, docs/api/resources.md): one statement whatever the page size,
 * `users` and `workspaces` joined only when embedded.
 */
import type { ResourceCtx } from '../context.ts'
import { selectColumns, unprefix, userColumns, workspaceColumns, type SqlFragment } from '../platform/sql.ts'
import type { UserRow, WorkspaceRow } from './user-workspace.schema.ts'

/** One row read by {@link selectOwned}: the resource's columns and, when embedded, its creator and workspace. */
export interface OwnedRow<R> {
  row: R
  user: UserRow | null
  workspace: WorkspaceRow | null
}

/**
 * Reads rows of `o.table` (aliased `o.alias`, its `o.fields` in camelCase) matching `o.where`,
 * with `o.tail` after the WHERE (order, limit, offset); `o.embed` names the relations to join.
 */
export async function selectOwned<R>(
  ctx: ResourceCtx,
  o: { table: string; alias: string; fields: readonly string[]; embed: readonly string[]; where: SqlFragment; tail?: string },
): Promise<OwnedRow<R>[]> {
  const withUser = o.embed.includes('user')
  const withWorkspace = o.embed.includes('workspace')
  const prefix = `${o.alias}_`
  const columns = [
    selectColumns(o.alias, prefix, o.fields),
    ...(withUser ? [userColumns('u', 'u_')] : []),
    ...(withWorkspace ? [workspaceColumns('w', 'w_')] : []),
  ].join(', ')
  const joins = `${withUser ? `join users u on u.id = ${o.alias}.user_id ` : ''}${withWorkspace ? `join workspaces w on w.id = ${o.alias}.workspace_id` : ''}`
  const rows = await ctx.em.execute(`select ${columns} from ${o.table} ${o.alias} ${joins} where ${o.where.sql} ${o.tail ?? ''}`, o.where.params)
  return rows.map((row) => ({
    row: unprefix<R>(row, prefix),
    user: withUser ? unprefix<UserRow>(row, 'u_') : null,
    workspace: withWorkspace ? unprefix<WorkspaceRow>(row, 'w_') : null,
  }))
}
