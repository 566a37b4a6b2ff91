/**
 * tRPC instance and the procedure builders every router uses (STYLE.md, `src/trpc`):
 * - `publicProcedure`: error mapping and the service scope of X-Service-Authorization;
 * - `authedProcedure`: a valid bearer token (API.md section 3); read-only tokens may only query;
 * - `workspaceProcedure`: plus the request's workspace context (API.md section 4).
 */
import { createHash } from 'node:crypto'
import { initTRPC } from '@trpc/server'
import type { OpenApiMeta } from 'trpc-to-openapi'
import { resolveWorkspaceContext, type WorkspaceContext } from '../access/workspace-access.ts'
import { ForbiddenError, UnauthorizedError } from '../errors.ts'
import { authenticate, type AuthContext } from '../services/auth.service.ts'
import type { Ctx } from './context.ts'
import { errorFormatter, toTRPCError } from './errors.ts'

/** Procedure metadata: the OpenAPI route plus the status of a success (201 for creates, 204 when bodiless). */
export type Meta = OpenApiMeta & {
  successStatus?: 201 | 202 | 204
  /** A read-only token may call this mutation too (logout). */
  readOnlyAllowed?: boolean
}

const t = initTRPC
  .context<Ctx>()
  .meta<Meta>()
  .create({ errorFormatter: (opts) => errorFormatter(opts) })

export const router = t.router
export const createCallerFactory = t.createCallerFactory
export const middleware = t.middleware

const mapErrors = t.middleware(async ({ ctx, meta, next }) => {
  if (meta?.successStatus) ctx.successStatus = meta.successStatus
  const result = await next()
  if (!result.ok) {
    const mapped = toTRPCError(result.error.cause, ctx.setHeader)
    if (mapped) throw mapped
  }
  return result
})

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex')

const serviceScope = t.middleware(({ ctx, next }) => {
  const raw = ctx.headers['x-service-authorization']
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim()
  if (!key) {
    // Set in place rather than through next({ctx}): tRPC copies the context on every next({ctx}),
    // and the copy reads the lazy `em` getter, forking an EntityManager the request may never use.
    ctx.serviceId = null
    return next()
  }
  // Compare hashes, so lookup time says nothing about how much of a guessed key was right.
  const serviceId = ctx.deps.serviceKeyHashes.get(hashKey(key))
  if (!serviceId) throw new UnauthorizedError('Invalid service key')
  return next({ ctx: { serviceId } })
})

/** Hashes configured service keys for {@link serviceScope}'s lookups. */
export function hashServiceKeys(keys: Map<string, string>): Map<string, string> {
  return new Map([...keys].map(([key, serviceId]) => [hashKey(key), serviceId]))
}

/** No authentication; errors mapped and service scope resolved. */
export const publicProcedure = t.procedure.use(mapErrors).use(serviceScope)

/** A valid bearer token of either kind; `ctx.auth` holds the caller. */
export const authedProcedure = publicProcedure.use(async ({ ctx, type, meta, next }) => {
  const auth: AuthContext = await authenticate(ctx)
  if (type === 'mutation' && !auth.token.abilities.includes('write') && !meta?.readOnlyAllowed) {
    throw new ForbiddenError('This token is read-only')
  }
  return next({ ctx: { auth } })
})

/** Authenticated and inside a workspace the caller belongs to; `ctx.workspace` holds it. */
export const workspaceProcedure = authedProcedure.use(async ({ ctx, getRawInput, next }) => {
  const raw = await getRawInput()
  const requested = typeof raw === 'object' && raw !== null && 'workspace_uuid' in raw ? raw.workspace_uuid : undefined
  const workspace: WorkspaceContext = await resolveWorkspaceContext(ctx, requested)
  return next({ ctx: { workspace } })
})
