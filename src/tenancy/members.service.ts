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
import { audit } from '../access/audit.ts'
import { WorkspaceMember, type WorkspaceRole } from '../../entities/index.ts'
import { assertWorkspaceAction, requireWorkspace, type WorkspaceAction } from '../access/workspace-access.ts'
import { usersInScope } from '../access/resource-access.ts'
import { queries, type Em } from '../platform/db.ts'
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { toNestedUser, type UserRow } from '../access/user-workspace.schema.ts'
import { iso, page } from '../access/wire.ts'
import type { AuthedCtx } from '../context.ts'

/** A membership as answered. */
export function toMember(user: UserRow, role: WorkspaceRole, createdAt: string | Date, updatedAt: string | Date, appUrl: string) {
  return { user: toNestedUser(user, appUrl), role, created_at: iso(createdAt), updated_at: iso(updatedAt) }
}

/**
 * The members of workspace `workspaceId` with their users: the user's columns under the names of
 * {@link UserRow}, the membership's times as `m_created_at` and `m_updated_at` (the typed queries
 * answer Dates only under a column's name, its property's, or `<alias>_<column>`).
 */
function members(em: Em, workspaceId: number) {
  return queries(em)
    .selectFrom('workspace_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select([
      'u.id',
      'u.name',
      'u.first_name as firstName',
      'u.last_name as lastName',
      'u.email',
      'u.profile_photo_key as profilePhotoKey',
      'u.service_id as serviceId',
      'u.created_at as createdAt',
      'u.updated_at as updatedAt',
      'm.role',
      'm.created_at as m_created_at',
      'm.updated_at as m_updated_at',
    ])
    .where('m.workspace_id', '=', workspaceId)
}

/** Members of a workspace the caller belongs to, oldest first. */
export async function list(ctx: AuthedCtx, input: { workspace_uuid: string; page: number; per_page: number }) {
  const { workspace } = await requireWorkspace(ctx, input.workspace_uuid, 'view')
  const [rows, count] = await Promise.all([
    members(ctx.em, workspace.id)
      .orderBy('m.id')
      .limit(input.per_page)
      .offset((input.page - 1) * input.per_page)
      .execute(),
    queries(ctx.em)
      .selectFrom('workspace_members')
      .select((eb) => eb.fn.countAll().as('total'))
      .where('workspace_id', '=', workspace.id)
      .executeTakeFirstOrThrow(),
  ])
  return page(
    rows.map((row) => toMember(row, row.role, row.m_created_at, row.m_updated_at, ctx.config.appUrl)),
    {
      total: Number(count.total),
      page: input.page,
      perPage: input.per_page,
      path: `${ctx.config.appUrl}/api/v1/workspaces/${workspace.uuid}/members`,
    },
  )
}

async function loadMember(ctx: AuthedCtx, workspaceId: number, userId: number) {
  const row = await members(ctx.em, workspaceId).where('m.user_id', '=', userId).executeTakeFirst()
  if (!row) throw new NotFoundError('Member')
  return toMember(row, row.role, row.m_created_at, row.m_updated_at, ctx.config.appUrl)
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
    const db = queries(em)
    const workspace = await db
      .selectFrom('workspaces')
      .select('id')
      .where('id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .forNoKeyUpdate()
      .executeTakeFirst()
    if (!workspace) throw new NotFoundError('Workspace')
    const rows = await db
      .selectFrom('workspace_members')
      .select(['user_id', 'role'])
      .where('workspace_id', '=', workspaceId)
      .where('user_id', 'in', [ctx.auth.user.id, userId])
      .execute()
    const roleOf = (id: number) => rows.find((row) => row.user_id === id)?.role ?? null
    const caller = roleOf(ctx.auth.user.id)
    assertWorkspaceAction(caller, action)
    return write(em, { caller, member: roleOf(userId) })
  })
}

/**
 * Adds an existing user (by `email` or `user_id`, in the caller's service scope) with a role.
 * @throws ValidationError when no such user exists (names the field); ConflictError when already a member.
 */
export async function add(ctx: AuthedCtx, input: { workspace_uuid: string; email?: string; user_id?: number; role: WorkspaceRole }) {
  const { workspace, role: callerRole } = await requireWorkspace(ctx, input.workspace_uuid, 'manage_members')
  assertMayGrant(callerRole, input.role)
  const email = input.email?.trim().toLowerCase()
  const user = await usersInScope(ctx)
    .select('id')
    .where((eb) => (email !== undefined ? eb('email', '=', email) : eb('id', '=', input.user_id ?? null)))
    .executeTakeFirst()
  if (!user) throw new ValidationError([email !== undefined ? 'email' : 'user_id'], 'No user with this value exists')
  const userId = user.id
  await withRoles(ctx, workspace.id, 'manage_members', userId, async (em, { caller, member }) => {
    assertMayGrant(caller, input.role)
    if (member) throw new ConflictError('The user is already a member of this workspace')
    em.create(WorkspaceMember, { workspace: workspace.id, user: userId, role: input.role })
    await em.flush()
    await audit(em, ctx, {
      action: 'member.add',
      workspaceId: workspace.id,
      resource: { type: 'member', id: userId },
      changes: { role: { from: null, to: input.role } },
    })
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
    await queries(em)
      .updateTable('workspace_members')
      .set((eb) => ({ role: input.role, updated_at: eb.fn<Date>('now') }))
      .where('workspace_id', '=', workspace.id)
      .where('user_id', '=', input.user_id)
      .execute()
    if (member !== input.role) {
      await audit(em, ctx, {
        action: 'member.update',
        workspaceId: workspace.id,
        resource: { type: 'member', id: input.user_id },
        changes: { role: { from: member, to: input.role } },
      })
    }
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
    const db = queries(em)
    await db.deleteFrom('workspace_members').where('workspace_id', '=', workspace.id).where('user_id', '=', input.user_id).execute()
    await db
      .updateTable('users')
      .set({ primary_workspace_id: null })
      .where('id', '=', input.user_id)
      .where('primary_workspace_id', '=', workspace.id)
      .execute()
    await audit(em, ctx, {
      action: 'member.remove',
      workspaceId: workspace.id,
      resource: { type: 'member', id: input.user_id },
      changes: { role: { from: member, to: null } },
    })
  })
  await ctx.deps.authCache.invalidate({ users: [input.user_id] })
}
