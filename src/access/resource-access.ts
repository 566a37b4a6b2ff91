/**
 * Access to tenant-owned resources (agents, prompts, tools, workflows, accounts, providers, datasets),
 * built on the SQL fragments of ./visibility.ts (docs/api/tenancy.md). Every service function on
 * such a resource starts with {@link requireResource} (docs/architecture.md, "How one request flows") and lists through {@link listScopeSql}, so the rules run in the database.
 */
import type { ResourceCtx, ServiceCtx } from '../context.ts'
import type { SharePermission, Visibility } from '../../entities/index.ts'
import { executePrepared, queries, type Em } from '../platform/db.ts'
import { ForbiddenError, NotFoundError } from '../platform/errors.ts'
import type { SqlFragment } from '../platform/sql.ts'
import { allows, permissionOf, permissionSql, visibleSql, type Viewer } from './visibility.ts'

/** Tables that hold shareable, visibility-scoped resources. */
export type ResourceTable = 'agents' | 'prompts' | 'tools' | 'workflows' | 'accounts' | 'providers' | 'datasets'

/** The viewer of a request: the caller, the request's workspace and the caller's role there. */
export function viewerOf(ctx: ResourceCtx): Viewer {
  return { userId: ctx.auth.user.id, workspaceId: ctx.workspace.workspace.id, role: ctx.workspace.role }
}

/**
 * The row's workspace is alive and in the caller's service scope (docs/api/authentication.md). Rows with
 * no workspace (built-in providers) pass when `allowGlobal` is set.
 */
export function serviceScopeSql(alias: string, ctx: ServiceCtx, allowGlobal = false): SqlFragment {
  const scoped = workspaceInScopeSql({ sql: `${alias}.workspace_id`, params: [] }, ctx)
  return { sql: `(${allowGlobal ? `${alias}.workspace_id is null or ` : ''}${scoped.sql})`, params: scoped.params }
}

/**
 * The users of the caller's service scope (docs/api/authentication.md: one account per e-mail
 * within a scope; NULL `service_id` is its own scope), as a typed query to narrow and select from.
 */
export function usersInScope(ctx: { em: Em; serviceId: string | null }) {
  return queries(ctx.em).selectFrom('users').where('service_id', 'is not distinct from', ctx.serviceId)
}

/**
 * Workspace `workspace` (a column, or a `?` with the id) is alive and in the caller's service
 * scope. With a known id PostgreSQL checks it once per statement, not once per row.
 */
export function workspaceInScopeSql(workspace: SqlFragment, ctx: ServiceCtx): SqlFragment {
  return {
    sql: `exists (select 1 from workspaces rw where rw.id = ${workspace.sql}
      and rw.deleted_at is null and rw.service_id is not distinct from ?)`,
    params: [...workspace.params, ctx.serviceId],
  }
}

/** What {@link requireResource} answers: the row's keys and the caller's permission on it. */
export interface ResourceAccess {
  id: number
  uuid: string
  userId: number | null
  workspaceId: number | null
  visibility: Visibility
  permission: SharePermission
}

const ACTION_WORDS: Record<SharePermission, string> = { read: 'use', write: 'change', admin: 'share or delete' }

/**
 * Loads the keys of a live row the caller may see, with the caller's permission, and checks
 * that permission is at least `needed` (`read` view/run, `write` update, `admin` share/delete).
 * @param label the resource's name in the 404 message (`Agent`).
 * @throws NotFoundError when there is no such live row or the caller may not see it (never
 *   revealing another tenant's rows); ForbiddenError when the caller sees it with too weak a
 *   permission.
 */
export async function requireResource(
  ctx: ResourceCtx,
  table: ResourceTable,
  label: string,
  uuid: string,
  needed: SharePermission,
): Promise<ResourceAccess> {
  return requireResourceWith(ctx, table, label, uuid, needed, '')
}

/**
 * {@link requireResource} that also reads `columns` of the row (a select list over alias `r`,
 * such as `r.name, r.metadata`, with its parameters if any) in the same statement, as `row`.
 * The resource is named by its uuid, or by `{id}` where the caller holds a reference to it (a
 * thread's agent).
 */
export async function requireResourceWith<Row extends Record<string, unknown>>(
  ctx: ResourceCtx,
  table: ResourceTable,
  label: string,
  key: string | { id: number },
  needed: SharePermission,
  columns: string | SqlFragment,
): Promise<ResourceAccess & { row: Row }> {
  const found = await findResource<Row>(ctx, table, key, columns)
  if (!found) throw new NotFoundError(label)
  if (!allows(found.permission, needed)) {
    throw new ForbiddenError(`You may not ${ACTION_WORDS[needed]} this ${label.toLowerCase()}`)
  }
  return found
}

/**
 * Like {@link requireResource} without the permission check; null when not visible. Every
 * resource request starts here, so the statement is prepared (src/platform/db.ts, `executePrepared`):
 * its text depends only on the table, the viewer's role and `columns`, and planning it costs
 * more than running it. Like every prepared statement it runs outside any transaction of the
 * request's EntityManager (no caller runs it inside one).
 * @param key the resource's uuid, or `{id}` where the caller holds a reference to it.
 * @param columns more of the row to read, as {@link requireResourceWith} takes them.
 */
export async function findResource<Row extends Record<string, unknown> = Record<string, unknown>>(
  ctx: ResourceCtx,
  table: ResourceTable,
  key: string | { id: number },
  columns: string | SqlFragment = '',
): Promise<(ResourceAccess & { row: Row }) | null> {
  const extra = typeof columns === 'string' ? { sql: columns, params: [] } : columns
  const viewer = viewerOf(ctx)
  const visible = visibleSql('r', table, viewer)
  const permission = permissionSql('r', table, viewer)
  const scope = serviceScopeSql('r', ctx, table === 'providers')
  const text = `select r.id::float8 as id, r.uuid, r.user_id::float8 as "userId", r.workspace_id::float8 as "workspaceId",
       r.visibility, ${permission.sql} as permission${extra.sql ? `, ${extra.sql}` : ''}
     from ${table} r where ${typeof key === 'string' ? 'r.uuid = ?' : 'r.id = ?'} and r.deleted_at is null and ${visible.sql} and ${scope.sql}`
  const params = [...permission.params, ...extra.params, typeof key === 'string' ? key : key.id, ...visible.params, ...scope.params]
  const [row] = await executePrepared(ctx.deps.orm, () => ctx.em, text, text, params)
  if (!row) return null
  const held = permissionOf(row.permission)
  if (!held) return null
  return {
    id: Number(row.id),
    uuid: String(row.uuid),
    userId: row.userId === null ? null : Number(row.userId),
    workspaceId: row.workspaceId === null ? null : Number(row.workspaceId),
    visibility: row.visibility as Visibility,
    permission: held,
    row: row as Row,
  }
}

/**
 * The rows of a list (docs/api/tenancy.md): without a `visibility` filter, the rows of the request's
 * workspace the viewer may see plus rows shared with the viewer or that workspace; with
 * `visibility=public`, every public row of the service scope; with another `visibility`, the
 * first set narrowed to it. Live rows only.
 */
export function listScopeSql(alias: string, table: ResourceTable, ctx: ResourceCtx, visibility?: Visibility): SqlFragment {
  const viewer = viewerOf(ctx)
  const scope = serviceScopeSql(alias, ctx, table === 'providers')
  if (visibility === 'public') {
    return { sql: `(${alias}.deleted_at is null and ${alias}.visibility = 'public' and ${scope.sql})`, params: scope.params }
  }
  const visible = visibleSql(alias, table, viewer)
  const shared = `exists (select 1 from shares ls where ls.resource_type = ? and ls.resource_id = ${alias}.id
      and ((ls.entity_type = 'user' and ls.entity_id = ?) or (ls.entity_type = 'workspace' and ls.entity_id = ?)))`
  return {
    sql: `(${alias}.deleted_at is null and ${visible.sql} and ${scope.sql}
      and (${alias}.workspace_id = ?${table === 'providers' ? ` or ${alias}.workspace_id is null` : ''} or ${shared})
      ${visibility ? `and ${alias}.visibility = ?` : ''})`,
    params: [
      ...visible.params,
      ...scope.params,
      viewer.workspaceId,
      table,
      viewer.userId,
      viewer.workspaceId,
      ...(visibility ? [visibility] : []),
    ],
  }
}

/** `%term%` for ILIKE, with the pattern characters of `term` escaped. */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}
