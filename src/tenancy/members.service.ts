/**
 * Workspace members (docs/api/tenancy.md): `GET/POST/PUT/DELETE /api/v1/workspaces/{uuid}/members[/{user_id}]`.
 * Any member may list; owners and admins add, change and remove; only an owner grants or takes
 * the `owner` role; the workspace's creator stays an owner; a member may always leave.
 *
 * Each change is checked and written in one transaction that holds the workspace row's lock, on
 * the caller's and the member's roles as they are then ({@link withRoles}): the changes of one
 * workspace take turns, and each is checked against those committed before it (two owners
 * demoting each other at once: the second is checked as an admin's, and refused).
 */
import { WorkspaceMember, type WorkspaceRole } from '../../entities/index.ts'
import { assertWorkspaceAction, requireWorkspace, type WorkspaceAction } from '../access/workspace-access.ts'
import type { Em } from '../platform/db.ts'
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { toNestedUser, type UserRow } from '../access/user.schema.ts'
import { iso, page } from '../access/wire.ts'
import type { AuthedCtx } from '../context.ts'
import { unprefix, userColumns } from '../platform/sql.ts'

/** A membership as answered. */
export function toMember(user: UserRow, role: WorkspaceRole, createdAt: string | Date, updatedAt: string | Date, appUrl: string) {
  return { user: toNestedUser(user, appUrl), role, created_at: iso(createdAt), updated_at: iso(updatedAt) }
}

const SELECT = (where: string) => `select ${userColumns('u', 'u_')}, m.role, m.created_at as "createdAt", m.updated_at as "updatedAt"
  from workspace_members m join users u on u.id = m.user_id where m.workspace_id = ? and ${where}`

function rowToMember(row: Record<string, unknown>, appUrl: string) {
  return toMember(unprefix<UserRow>(row, 'u_'), row.role as WorkspaceRole, String(row.createdAt), String(row.updatedAt), appUrl)
}

/** Members of a workspace the caller belongs to, oldest first. */
export async function list(ctx: AuthedCtx, input: { workspace_uuid: string; page: number; per_page: number }) {
  const { workspace } = await requireWorkspace(ctx, input.workspace_uuid, 'view')
  const [rows, [count]] = await Promise.all([
    ctx.em.execute(`${SELECT('true')} order by m.id limit ? offset ?`, [workspace.id, input.per_page, (input.page - 1) * input.per_page]),
    ctx.em.execute('select count(*)::int as total from workspace_members where workspace_id = ?', [workspace.id]),
  ])
  return page(
    rows.map((row) => rowToMember(row, ctx.config.appUrl)),
    {
      total: Number(count.total),
      page: input.page,
      perPage: input.per_page,
      path: `${ctx.config.appUrl}/api/v1/workspaces/${workspace.uuid}/members`,
    },
  )
}

async function loadMember(ctx: AuthedCtx, workspaceId: number, userId: number) {
  const [row] = await ctx.em.execute(SELECT('m.user_id = ?'), [workspaceId, userId])
  if (!row) throw new NotFoundError('Member')
  return rowToMember(row, ctx.config.appUrl)
}

function assertMayGrant(callerRole: WorkspaceRole, role: WorkspaceRole): void {
  if (role === 'owner' && callerRole !== 'owner') throw new ForbiddenError('Only an owner may grant the owner role')
}

/**
 * Runs `write` in a transaction that holds workspace `workspaceId`'s row lock (`for no key update`:
 * other membership changes and workspace updates wait, inserts that reference the workspace do
 * not), with the caller's role there checked again for `action` and the role of member `userId`
 * (null: not a member), both read under the lock.
 * @throws NotFoundError when the workspace is gone or the caller is no longer a member;
 *   ForbiddenError when the caller's role no longer allows `action`; what `write` throws.
 */
async function withRoles<T>(
  ctx: AuthedCtx,
  workspaceId: number,
  action: WorkspaceAction,
  userId: number,
  write: (em: Em, roles: { caller: WorkspaceRole; member: WorkspaceRole | null }) => Promise<T>,
): Promise<T> {
  return ctx.em.transactional(async (em) => {
    const [workspace] = await em.execute('select id from workspaces where id = ? and deleted_at is null for no key update', [workspaceId])
    if (!workspace) throw new NotFoundError('Workspace')
    const rows = await em.execute<{ user_id: number; role: WorkspaceRole }[]>(
      'select user_id::float8 as user_id, role from workspace_members where workspace_id = ? and user_id in (?, ?)',
      [workspaceId, ctx.auth.user.id, userId],
    )
    const roleOf = (id: number) => rows.find((row) => Number(row.user_id) === id)?.role ?? null
    const caller = roleOf(ctx.auth.user.id)
    assertWorkspaceAction(caller, action)
    return write(em, { caller, member: roleOf(userId) })
  })
}

/**
 * Adds an existing user (by `email` or `user_id`, in the caller's service scope) with a role.
 * @throws ValidationError when no such user exists (names the field); ConflictError when already a member.
 */
export async function add(
  ctx: AuthedCtx,
  input: { workspace_uuid: string; email?: string; user_id?: number; role: WorkspaceRole },
) {
  const { workspace, role: callerRole } = await requireWorkspace(ctx, input.workspace_uuid, 'manage_members')
  assertMayGrant(callerRole, input.role)
  const field = input.email !== undefined ? 'email' : 'user_id'
  const [user] = await ctx.em.execute(
    `select id from users where ${field === 'email' ? 'email = ?' : 'id = ?'} and service_id is not distinct from ?`,
    [field === 'email' ? input.email?.trim().toLowerCase() : input.user_id, ctx.serviceId],
  )
  if (!user) throw new ValidationError([field], 'No user with this value exists')
  const userId = Number(user.id)
  await withRoles(ctx, workspace.id, 'manage_members', userId, async (em, { caller, member }) => {
    assertMayGrant(caller, input.role)
    if (member) throw new ConflictError('The user is already a member of this workspace')
    em.create(WorkspaceMember, { workspace: workspace.id, user: userId, role: input.role })
    await em.flush()
  })
  // A cached caller holds their role in their primary workspace (src/tenancy/auth.service.ts).
  await ctx.deps.authCache.invalidate({ users: [userId] })
  return { data: await loadMember(ctx, workspace.id, userId) }
}

/**
 * Changes a member's role.
 * @throws ForbiddenError (a `member` caller, or an admin touching an owner); ConflictError when
 *   the workspace's creator would stop being an owner.
 */
export async function update(ctx: AuthedCtx, input: { workspace_uuid: string; user_id: number; role: WorkspaceRole }) {
  const { workspace } = await requireWorkspace(ctx, input.workspace_uuid, 'manage_members')
  await withRoles(ctx, workspace.id, 'manage_members', input.user_id, async (em, { caller, member }) => {
    if (!member) throw new NotFoundError('Member')
    assertMayGrant(caller, input.role)
    if (member === 'owner' && caller !== 'owner') throw new ForbiddenError('Only an owner may change an owner')
    if (input.user_id === workspace.userId && input.role !== 'owner') {
      throw new ConflictError("The workspace's creator stays an owner")
    }
    await em.execute('update workspace_members set role = ?, updated_at = now() where workspace_id = ? and user_id = ?', [
      input.role,
      workspace.id,
      input.user_id,
    ])
  })
  // A cached caller holds their role in their primary workspace (src/tenancy/auth.service.ts).
  await ctx.deps.authCache.invalidate({ users: [input.user_id] })
  return { data: await loadMember(ctx, workspace.id, input.user_id) }
}

/**
 * Removes a member, or lets the caller leave. The member loses the workspace as primary if it
 * was theirs, so their cached callers are dropped.
 * @throws ConflictError for the workspace's creator; ForbiddenError when a `member` removes
 *   someone else or an admin removes an owner.
 */
export async function remove(ctx: AuthedCtx, input: { workspace_uuid: string; user_id: number }): Promise<void> {
  const leaving = input.user_id === ctx.auth.user.id
  const { workspace } = await requireWorkspace(ctx, input.workspace_uuid, leaving ? 'view' : 'manage_members')
  await withRoles(ctx, workspace.id, leaving ? 'view' : 'manage_members', input.user_id, async (em, { caller, member }) => {
    if (!member) throw new NotFoundError('Member')
    if (input.user_id === workspace.userId) throw new ConflictError("The workspace's creator cannot be removed")
    if (!leaving && member === 'owner' && caller !== 'owner') throw new ForbiddenError('Only an owner may remove an owner')
    await em.execute('delete from workspace_members where workspace_id = ? and user_id = ?', [workspace.id, input.user_id])
    await em.execute('update users set primary_workspace_id = null where id = ? and primary_workspace_id = ?', [input.user_id, workspace.id])
  })
  await ctx.deps.authCache.invalidate({ users: [input.user_id] })
}
