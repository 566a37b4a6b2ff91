/**
 * tRPC instance and the procedure builders every router uses (docs/architecture.md, `src/trpc`):
 * - `publicProcedure`: error mapping and the service scope of X-Service-Authorization;
 * - `authedProcedure`: a valid bearer token (docs/api/authentication.md); read-only tokens may only query;
 * - `workspaceProcedure`: plus the request's workspace context (docs/api/tenancy.md).
 */
import { initTRPC, type TRPCError } from '@trpc/server'
import type { OpenApiMeta } from 'trpc-to-openapi'
import { z } from 'zod'
import { resolveWorkspaceContext } from '../access/workspace-access.ts'
import { ForbiddenError } from '../platform/errors.ts'
import { authenticate } from '../tenancy/index.ts'
import type { Ctx } from './context.ts'
import type { Meta, RootContext } from './root-types.ts'
import { errorFormatter, toTRPCError } from './errors.ts'
import { hashKey, serviceIdOf } from './service-scope.ts'
import { type AuthContext, type WorkspaceContext } from '../context.ts'
import { issueMessage } from '../access/issues.ts'

export type { Meta } from './root-types.ts'

declare module './root-types.ts' {
  /** The OpenAPI route of a procedure (trpc-to-openapi), merged here so that front ends' declarations need no trpc-to-openapi. */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the members come from OpenApiMeta
  interface Meta extends OpenApiMeta {}
}

// Every input is parsed with the same messages on both surfaces ("agent_uuid must be a UUID").
z.config({ customError: issueMessage })

const t = initTRPC
  .context<RootContext>()
  .meta<Meta>()
  .create({ errorFormatter: (opts) => errorFormatter(opts) })

export const router = t.router
export const createCallerFactory = t.createCallerFactory
export const middleware = t.middleware

/** The result of `next()` as a middleware sees it: ok, or a failure whose `cause` is what was thrown. */
type NextResult = { ok: true } | { ok: false; error: TRPCError }

/** Turns a service's named error into its tRPC error (the HTTP status); anything else stays as thrown. */
function mapError(ctx: Ctx, cause: unknown): unknown {
  return toTRPCError(cause, ctx.setHeader) ?? cause
}

/** Maps the named error of a failed `next()` (a later middleware, the input parser, the resolver). */
function mapResult<R extends NextResult>(ctx: Ctx, result: R): R {
  if (!result.ok) {
    const mapped = toTRPCError(result.error.cause, ctx.setHeader)
    if (mapped) throw mapped
  }
  return result
}

/**
 * The service scope of X-Service-Authorization (docs/api/authentication.md), see ./service-scope.ts.
 * @throws UnauthorizedError for a non-empty header that is no configured key.
 */
const serviceScopeOf = (ctx: Ctx): string | null => serviceIdOf(ctx.headers, ctx.deps)

/** Hashes configured service keys for {@link serviceScopeOf}'s lookups. */
export function hashServiceKeys(keys: Map<string, string>): Map<string, string> {
  return new Map([...keys].map(([key, serviceId]) => [hashKey(key), serviceId]))
}

/*
 * Each middleware level costs every request a few copies of tRPC's call options, so error
 * mapping, service scope and authentication are one level each procedure kind starts with, not
 * three. What they add to the context depends only on the request's headers, so they set it in
 * place rather than through `next({ ctx })`, whose copy would also fork the lazy EntityManager
 * (src/trpc/context.ts). In place is safe even where calls share one context (a tRPC batch, a
 * WebSocket connection): every call of it has the same headers, so writes the same values.
 */

/**
 * The start of every procedure, around `next()`: counts the call in flight, sets the success
 * status and the service scope, runs `check` (authentication), maps the named errors of all of
 * it and of what `next()` runs, and once a mutation is done drops the cached reads (any mutation
 * may change what one shows, src/platform/read-cache.ts) unless its meta says it stores nothing.
 */
async function around<R extends NextResult>(
  { ctx, type, meta }: { ctx: Ctx; type: string; meta: Meta | undefined },
  check: (() => Promise<void>) | null,
  next: () => Promise<R>,
): Promise<R> {
  ctx.deps.inFlight.enter()
  try {
    if (meta?.successStatus) ctx.successStatus = meta.successStatus
    try {
      ctx.serviceId = serviceScopeOf(ctx)
      if (check) await check()
    } catch (error) {
      throw mapError(ctx, error)
    }
    return mapResult(ctx, await next())
  } finally {
    if (type === 'mutation' && !meta?.storesNothing) await ctx.deps.readCache.written()
    ctx.deps.inFlight.leave()
  }
}

/** Error mapping, success status and service scope (see {@link around}). */
const base = t.middleware((opts) => around(opts, null, () => opts.next()))

/**
 * Authentication for {@link around}: a valid bearer token (docs/api/authentication.md), set on the context
 * in place; read-only tokens may only query, unless the procedure's meta allows the mutation.
 */
async function authenticateCall(ctx: Ctx, type: string, meta: Meta | undefined): Promise<AuthContext> {
  const auth: AuthContext = await authenticate(ctx)
  if (type === 'mutation' && !auth.token.abilities.includes('write') && !meta?.readOnlyAllowed) {
    throw new ForbiddenError('This token is read-only')
  }
  ctx.auth = auth
  return auth
}

/** As {@link base}, plus a valid bearer token (docs/api/authentication.md); read-only tokens may only query. */
const authed = t.middleware((opts) => {
  const check = async (): Promise<void> => {
    await authenticateCall(opts.ctx, opts.type, opts.meta)
  }
  // Typed as if passed through `next({ ctx: { auth } })`: `check` sets it in place.
  return around(opts, check, () => opts.next<{ auth: AuthContext }>({}))
})

/** What a workspace procedure adds to the context (src/access/resource-access.ts, `ResourceCtx`). */
export type InWorkspace = { auth: AuthContext; workspace: WorkspaceContext }

/**
 * Everything a workspace procedure starts with, as one middleware level: {@link around}, a
 * valid bearer token, and the request's workspace context (docs/api/tenancy.md: the
 * X-Workspace-UUID header, the input's `workspace_uuid`, the token's workspace, the primary
 * one). Then `then` runs in place of `next()`, with the context and the options to pass to
 * `next` so that the rest of the procedure sees the workspace. One level rather than one per
 * concern: each level costs every call tRPC's copies of its options (the metrics cache,
 * src/trpc/cache.ts, joins it too, so a cache hit is one level).
 * @throws NotFoundError (404) when the caller is no member of the requested workspace,
 *   ValidationError (400) for a malformed X-Workspace-UUID, and what {@link authenticateCall} throws.
 */
export function inWorkspace<R extends NextResult>(
  opts: { ctx: Ctx; type: string; meta: Meta | undefined; getRawInput: () => Promise<unknown> },
  then: (ctx: Ctx & InWorkspace, carry: { ctx?: InWorkspace }) => Promise<R>,
): Promise<R> {
  const { ctx } = opts
  let entered: InWorkspace | undefined
  const check = async (): Promise<void> => {
    const auth = await authenticateCall(ctx, opts.type, opts.meta)
    const raw = await opts.getRawInput()
    const requested = typeof raw === 'object' && raw !== null && 'workspace_uuid' in raw ? raw.workspace_uuid : undefined
    entered = { auth, workspace: await resolveWorkspaceContext(ctx as Ctx & { auth: AuthContext }, requested) }
  }
  return around(opts, check, () => {
    const done = entered as InWorkspace
    if (ctx.singleCall) {
      // In place, as `authed` does: next({ ctx }) would copy the context and so fork the lazy
      // EntityManager and logger even for an answer served from a cache. Only where the
      // context serves this call alone, since the workspace depends on the call's input.
      ctx.workspace = done.workspace
      return then(ctx as Ctx & InWorkspace, {})
    }
    return then({ ...ctx, ...done }, { ctx: done })
  })
}

/** The builder the procedure kinds start from; routers use the kinds below (or src/trpc/cache.ts). */
export const procedure = t.procedure

/** No authentication; errors mapped and service scope resolved. */
export const publicProcedure = t.procedure.use(base)

/** A valid bearer token of either kind; `ctx.auth` holds the caller. */
export const authedProcedure = t.procedure.use(authed)

/** Authenticated and inside a workspace the caller belongs to; `ctx.workspace` holds it. */
export const workspaceProcedure = t.procedure.use((opts) => inWorkspace(opts, (_ctx, carry) => opts.next<InWorkspace>(carry)))
