/**
 * Visibility, shares and `is_owner` as SQL (docs/api/tenancy.md), written once for every
 * tenant-owned table that has `id`, `user_id`, `workspace_id` and `visibility` columns
 * (agents, prompts, workflows, tools, ...). Services put these fragments into their own queries,
 * so lists, retrieves, updates and metrics all filter in the database, never after loading.
 *
 * Rules:
 * - `private`: the owner and explicit shares;
 * - `workspace`: every member of the resource's workspace;
 * - `public`: every authenticated user of the service scope;
 * - the owner, and the owner/admins of the resource's workspace, have every permission;
 * - shares to a user or to a workspace the caller belongs to grant `read`, `write` or `admin`.
 */
import type { SqlFragment } from '../platform/sql.ts'
import type { SharePermission, WorkspaceRole } from '../../entities/index.ts'

/** Who is asking: the caller and the workspace context of the request. */
export interface Viewer {
  userId: number
  /** The request's workspace (docs/api/tenancy.md). */
  workspaceId: number
  /** The caller's role in that workspace. */
  role: WorkspaceRole
}

/** Permission levels, weakest first; `none` sorts lowest. */
export const PERMISSION_RANK: Record<SharePermission, number> = { read: 1, write: 2, admin: 3 }

/** Workspace owners and admins hold every permission on their workspace's rows. */
/** True for the workspace's owners and admins: they see (and administer) every row of their workspace. */
export const managesWorkspace = (viewer: Viewer) => viewer.role === 'owner' || viewer.role === 'admin'

/** `shares` rows granting `alias` (of `resourceType`) to the viewer or to the viewer's workspace. */
function sharesFor(alias: string, resourceType: string, viewer: Viewer): SqlFragment {
  return {
    sql: `select s.permission from shares s where s.resource_type = ? and s.resource_id = ${alias}.id
      and ((s.entity_type = 'user' and s.entity_id = ?) or (s.entity_type = 'workspace' and s.entity_id = ?))`,
    params: [resourceType, viewer.userId, viewer.workspaceId],
  }
}

/** True when the viewer is the row's owner: the `is_owner` flag. */
export function isOwnerSql(alias: string, viewer: Viewer): SqlFragment {
  return { sql: `(${alias}.user_id = ?)`, params: [viewer.userId] }
}

/**
 * True for rows the viewer may see at all: owner, a workspace-visible row of the viewer's
 * workspace, any row of the viewer's workspace when the viewer is its owner/admin, a public row,
 * or a share.
 */
export function visibleSql(alias: string, resourceType: string, viewer: Viewer): SqlFragment {
  const shares = sharesFor(alias, resourceType, viewer)
  const admin = managesWorkspace(viewer)
  return {
    sql: `(${alias}.user_id = ?
      or (${alias}.workspace_id = ? and ${admin ? 'true' : `${alias}.visibility = 'workspace'`})
      or ${alias}.visibility = 'public'
      or exists (${shares.sql}))`,
    params: [viewer.userId, viewer.workspaceId, ...shares.params],
  }
}

/**
 * The viewer's permission on the row as a SQL expression: 'admin', 'write', 'read' or null.
 * Seeing a row (workspace or public visibility) grants `read`; shares grant their level.
 */
export function permissionSql(alias: string, resourceType: string, viewer: Viewer): SqlFragment {
  const shares = sharesFor(alias, resourceType, viewer)
  const admin = managesWorkspace(viewer)
  return {
    sql: `(case
      when ${alias}.user_id = ? then 'admin'${
        admin
          ? `
      when ${alias}.workspace_id = ? then 'admin'`
          : ''
      }
      else coalesce(
        (select max(case p.permission when 'admin' then 3 when 'write' then 2 else 1 end) from (${shares.sql}) p)::text,
        case when ${alias}.visibility = 'public' or (${alias}.workspace_id = ? and ${alias}.visibility = 'workspace') then '1' end)
      end)`,
    params: [viewer.userId, ...(admin ? [viewer.workspaceId] : []), ...shares.params, viewer.workspaceId],
  }
}

/** Turns {@link permissionSql}'s value ('admin' or a rank as text) into a permission or null. */
export function permissionOf(value: unknown): SharePermission | null {
  switch (String(value)) {
    case 'admin':
    case '3':
      return 'admin'
    case '2':
      return 'write'
    case '1':
      return 'read'
    default:
      return null
  }
}

/** Whether `held` is at least `needed`. */
export function allows(held: SharePermission | null, needed: SharePermission): boolean {
  return held !== null && PERMISSION_RANK[held] >= PERMISSION_RANK[needed]
}

/** Tables whose rows can be favourited. */
export type FavoriteTable = 'agents' | 'workflows'

/**
 * SQL that is true when `alias` (a row of `table`) is a favourite of the user; for `is_favorite`
 * in a select list and for the `favorite` list filter.
 */
export function favoriteSql(alias: string, table: FavoriteTable, userId: number): SqlFragment {
  return {
    sql: `exists (select 1 from favorites f where f.user_id = ? and f.resource_type = ? and f.resource_id = ${alias}.id)`,
    params: [userId, table],
  }
}
