/**
 * Workspace membership and roles (docs/api/tenancy.md): who may see, change or delete a workspace,
 * and which workspace a request works in. Every check is one SQL query on the membership.
 */
import type { WorkspaceRole } from '../../entities/index.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { notUuidMessage } from './issues.ts'
import type { WorkspaceRow } from './user-workspace.schema.ts'
import { unprefix, workspaceColumns } from '../platform/sql.ts'
import type { AuthedCtx, WorkspaceContext } from '../context.ts'

/** What can be done to a workspace, and the roles allowed to. */
export const WORKSPACE_ACTIONS = {
  view: ['owner', 'admin', 'member'],
  update: ['owner', 'admin'],
  manage_members: ['owner', 'admin'],
  delete: ['owner'],
} as const satisfies Record<string, readonly WorkspaceRole[]>
export type WorkspaceAction = keyof typeof WORKSPACE_ACTIONS

/**
 * SQL condition (alias `w`) for workspaces the caller is a member of, in the caller's service
 * scope, alive, and within the token's bound workspace if any. Joins `workspace_members m`.
 */
export function memberWorkspaceSql(ctx: AuthedCtx): { join: string; where: string; params: unknown[] } {
  const bound = ctx.auth.token.workspaceId
  return {
    join: 'join workspace_members m on m.workspace_id = w.id and m.user_id = ?',
    where: `w.deleted_at is null and w.service_id is not distinct from ?${bound === null ? '' : ' and w.id = ?'}`,
    params: bound === null ? [ctx.auth.user.id, ctx.serviceId] : [ctx.auth.user.id, ctx.serviceId, bound],
  }
}

/** Loads a workspace the caller is a member of, with their role; null when not visible. */
async function findMembership(ctx: AuthedCtx, by: 'uuid' | 'id', value: string | number): Promise<WorkspaceContext | null> {
  const scope = memberWorkspaceSql(ctx)
  const [row] = await ctx.em.execute(
    `select ${workspaceColumns('w', 'w_')}, m.role as "role" from workspaces w ${scope.join}
     where w.${by} = ? and ${scope.where}`,
    [scope.params[0], value, ...scope.params.slice(1)],
  )
  if (!row) return null
  return { workspace: unprefix<WorkspaceRow>(row, 'w_'), role: row.role as WorkspaceRole }
}

/**
 * The workspace `uuid` if the caller may do `action` to it.
 * @throws NotFoundError when the caller is no member (or it is another service's, or deleted);
 *   ForbiddenError when the caller's role does not allow the action.
 */
export async function requireWorkspace(ctx: AuthedCtx, uuid: string, action: WorkspaceAction): Promise<WorkspaceContext> {
  const found = await findMembership(ctx, 'uuid', uuid)
  assertWorkspaceAction(found?.role ?? null, action)
  return found!
}

/**
 * Checks that a member of role `role` (null: no member) may do `action` to a workspace, as
 * {@link requireWorkspace} does; for checks made again on a role read under a lock.
 * @throws NotFoundError for no member; ForbiddenError when the role does not allow the action.
 */
export function assertWorkspaceAction(role: WorkspaceRole | null, action: WorkspaceAction): asserts role is WorkspaceRole {
  if (!role) throw new NotFoundError('Workspace')
  if (!(WORKSPACE_ACTIONS[action] as readonly WorkspaceRole[]).includes(role)) {
    throw new ForbiddenError(`Your role (${role}) may not ${action.replace('_', ' ')} this workspace`)
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The caller's primary workspace as a context, from the authenticated caller (its row and the
 * caller's role there come with the token, src/tenancy/auth.service.ts), when it is a context
 * the membership query would also answer: the token is bound to no other workspace and the
 * workspace is of the request's service scope. Saves a query on most resource requests.
 */
function primaryContext(ctx: AuthedCtx): WorkspaceContext | null {
  const { primaryWorkspace, primaryRole, token } = ctx.auth
  if (!primaryWorkspace || !primaryRole) return null
  if (token.workspaceId !== null && token.workspaceId !== primaryWorkspace.id) return null
  if (primaryWorkspace.serviceId !== ctx.serviceId) return null
  return { workspace: primaryWorkspace, role: primaryRole }
}

/**
 * Resolves the request's workspace context (docs/api/tenancy.md): the `X-Workspace-UUID` header,
 * else the input's `workspace_uuid`, else the token's bound workspace, else the caller's primary
 * workspace. The caller must be a member.
 * @throws ValidationError for a malformed header; NotFoundError when there is no such membership.
 */
export async function resolveWorkspaceContext(ctx: AuthedCtx, inputWorkspaceUuid: unknown): Promise<WorkspaceContext> {
  const header = ctx.headers['x-workspace-uuid']
  const fromHeader = Array.isArray(header) ? header[0] : header
  if (fromHeader !== undefined && fromHeader !== '' && !UUID.test(fromHeader)) {
    throw new ValidationError(['X-Workspace-UUID'], notUuidMessage(['X-Workspace-UUID']))
  }
  const requested = fromHeader || (typeof inputWorkspaceUuid === 'string' && UUID.test(inputWorkspaceUuid) ? inputWorkspaceUuid : null)
  const primary = primaryContext(ctx)
  if (primary && (requested === null || requested.toLowerCase() === primary.workspace.uuid)) return primary
  let found: WorkspaceContext | null
  if (fromHeader) found = await findMembership(ctx, 'uuid', fromHeader.toLowerCase())
  else if (typeof inputWorkspaceUuid === 'string' && UUID.test(inputWorkspaceUuid)) {
    found = await findMembership(ctx, 'uuid', inputWorkspaceUuid.toLowerCase())
  } else if (ctx.auth.token.workspaceId !== null) found = await findMembership(ctx, 'id', ctx.auth.token.workspaceId)
  else if (ctx.auth.primaryWorkspace) found = await findMembership(ctx, 'id', ctx.auth.primaryWorkspace.id)
  else found = null
  if (!found) throw new NotFoundError('Workspace')
  return found
}
