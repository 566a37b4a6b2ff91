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
 * The columns {@link actingContextOf} reads, over the joins of {@link actingJoins}: a statement
 * that reads something else (a command room firing's claim) builds the context with no statement
 * of its own.
 */
export const ACTING_COLUMNS = `${userColumns('au', 'au_')}, ${workspaceColumns('aw', 'aw_')}, am.role as "am_role"`

/**
 * The joins {@link ACTING_COLUMNS} read, for the user `userId` acting in `workspaceId` (SQL
 * expressions of the enclosing statement): left joins, so a gone membership, user or workspace
 * reads as nulls rather than hiding the statement's own row.
 */
export const actingJoins = (userId: string, workspaceId: string): string =>
  `left join workspace_members am on am.user_id = ${userId} and am.workspace_id = ${workspaceId}
   left join users au on au.id = am.user_id
   left join workspaces aw on aw.id = am.workspace_id and aw.deleted_at is null`

/**
 * Builds the context of `userId` acting in `workspaceId`, as a read-write caller.
 * @throws NotFoundError when the user, the workspace or the membership is gone.
 */
export async function actingContext(deps: ServiceDeps, userId: number, workspaceId: number): Promise<ResourceCtx> {
  const [row] = await deps.orm.em.fork().execute<Record<string, unknown>[]>(
    `select ${ACTING_COLUMNS}
     from users au
     join workspace_members am on am.user_id = au.id and am.workspace_id = ?
     join workspaces aw on aw.id = am.workspace_id and aw.deleted_at is null
     where au.id = ?`,
    [workspaceId, userId],
  )
  return actingContextOf(deps, row ?? {}, workspaceId)
}

/**
 * {@link actingContext} from a row read with {@link ACTING_COLUMNS}.
 * @throws NotFoundError when the row says the user, the workspace or the membership is gone.
 */
export function actingContextOf(deps: ServiceDeps, row: Record<string, unknown>, workspaceId: number): ResourceCtx {
  if (row.am_role == null || row.au_id == null || row.aw_id == null) {
    throw new NotFoundError('The user of this execution is no longer a member of its workspace')
  }
  const ctx = createServiceContext(deps, { requestId: `execution-${randomUUID()}`, ip: '127.0.0.1', headers: {}, setHeader: () => {} })
  const user = unprefix<UserRow>(row, 'au_')
  const workspace = unprefix<WorkspaceRow>(row, 'aw_')
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
    workspace: { workspace, role: String(row.am_role) as WorkspaceRole },
  })
}
