/** The authenticated user (`GET /api/v1/user`), answered from the authentication query alone. */
import { toUser, type TUser } from '../access/user-workspace.schema.ts'
import type { AuthContext, ServiceCtx } from '../context.ts'

/** The caller with their primary workspace; no further query. */
export function me(ctx: ServiceCtx & { auth: AuthContext }): { data: TUser } {
  const { user, primaryWorkspace } = ctx.auth
  return { data: toUser(user, primaryWorkspace, user.id, ctx.config.appUrl) }
}
