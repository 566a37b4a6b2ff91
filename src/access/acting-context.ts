/**
 * The resource context a workflow execution acts in: the execution's user
 * (the caller of a manual run or retry, the workflow's owner for webhooks and schedules) in the
 * workflow's workspace, with that user's current role there. Nodes that call services (run a
 * prompt or an agent, an HTTP request with an account) go through the same access checks a
 * request of that user would (src/workflows/workflow-node-services.ts).
 */
import { randomUUID } from 'node:crypto'
import type { WorkspaceRole } from '../../entities/index.ts'
import { NotFoundError } from '../platform/errors.ts'
import type { UserRow, WorkspaceRow } from './user-workspace.schema.ts'
import { unprefix, userColumns, workspaceColumns } from '../platform/sql.ts'
import { createServiceContext, type ResourceCtx, type ServiceDeps } from '../context.ts'

/**
 * Builds the context of `userId` acting in `workspaceId`, as a read-write caller.
 * @throws NotFoundError when the user, the workspace or the membership is gone.
 */
export async function actingContext(deps: ServiceDeps, userId: number, workspaceId: number): Promise<ResourceCtx> {
  const ctx = createServiceContext(deps, { requestId: `execution-${randomUUID()}`, ip: '127.0.0.1', headers: {}, setHeader: () => {} })
  const [row] = await ctx.em.execute<Record<string, unknown>[]>(
    `select ${userColumns('u', 'u_')}, ${workspaceColumns('w', 'w_')}, m.role as "role"
     from users u
     join workspace_members m on m.user_id = u.id and m.workspace_id = ?
     join workspaces w on w.id = m.workspace_id and w.deleted_at is null
     where u.id = ?`,
    [workspaceId, userId],
  )
  if (!row) throw new NotFoundError('The user of this execution is no longer a member of its workspace')
  const user = unprefix<UserRow>(row, 'u_')
  const workspace = unprefix<WorkspaceRow>(row, 'w_')
  ctx.serviceId = user.serviceId
  const now = new Date()
  return Object.assign(ctx, {
    auth: {
      user,
      primaryWorkspace: null,
      primaryRole: null,
      token: {
        id: 0,
        uuid: '00000000-0000-0000-0000-000000000000',
        kind: 'application' as const,
        name: 'workflow execution',
        prefix: '',
        abilities: ['read' as const, 'write' as const],
        workspaceId,
        workspaceUuid: workspace.uuid,
        expiresAt: null,
        lastUsedAt: null,
        createdAt: now,
      },
    },
    workspace: { workspace, role: String(row.role) as WorkspaceRole },
  })
}
