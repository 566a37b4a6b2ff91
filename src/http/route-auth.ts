/**
 * Authentication of the plain Fastify routes beside the procedures (uploads, run event streams):
 * the same service functions and order as `workspaceProcedure` (src/trpc/init.ts), so both
 * surfaces accept and refuse the same requests.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { resolveWorkspaceContext } from '../access/workspace-access.ts'
import { ForbiddenError } from '../platform/errors.ts'
import { authenticate } from '../tenancy/index.ts'
import type { Ctx } from '../trpc/context.ts'
import { serviceIdOf } from '../trpc/service-scope.ts'
import type { RequestMeta, ResourceCtx } from '../context.ts'

/** The request's context, as the procedures get it. */
export function contextOf(createContext: (meta: RequestMeta) => Ctx, request: FastifyRequest, reply: FastifyReply): Ctx {
  return createContext({
    requestId: request.id,
    ip: request.ip,
    headers: request.headers,
    setHeader: (name, value) => void reply.header(name, value),
  })
}

/**
 * The service scope of X-Service-Authorization, the bearer token and the workspace context
 * (X-Workspace-UUID or the primary workspace); `write` also requires the token's write ability.
 * @throws UnauthorizedError, ForbiddenError (read-only token for a write), ValidationError /
 *   NotFoundError (X-Workspace-UUID).
 */
export async function authorize(ctx: Ctx, write: boolean): Promise<ResourceCtx> {
  ctx.serviceId = serviceIdOf(ctx.headers, ctx.deps)
  const auth = await authenticate(ctx)
  if (write && !auth.token.abilities.includes('write')) throw new ForbiddenError('This token is read-only')
  const authed = Object.assign(ctx, { auth })
  return Object.assign(authed, { workspace: await resolveWorkspaceContext(authed, undefined) })
}
