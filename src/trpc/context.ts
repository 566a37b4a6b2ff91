/**
 * The tRPC context: the service context (src/context.ts) plus what only the transport needs.
 *
 * Both surfaces (tRPC over HTTP and WebSocket, REST through src/http/rest-handler.ts) and the tests'
 * `appRouter.createCaller` build it with {@link createContextFactory}. Services take it as the
 * narrower `ServiceCtx`, which it satisfies.
 *
 * tRPC's `next({ ctx })` copies the context with an object spread, which reads every getter:
 * a copy forks the EntityManager whether or not the procedure needs it. Middlewares whose
 * additions depend only on the request's headers (service scope, the authenticated caller) set
 * them on the context in place instead (src/trpc/init.ts). The workspace also depends on the
 * call's input, so the workspace middleware sets it in place only where the context serves one
 * call (`RequestMeta.singleCall`, the REST surface) and copies elsewhere.
 */
import type { Keyv } from 'keyv'
import type { RedisConnection } from '../platform/redis.ts'
import { createServiceContext, type RequestMeta, type ServiceCtx, type ServiceDeps } from '../context.ts'
import type { InFlight } from './in-flight.ts'
import type { RateLimits } from './rate-limit.ts'

export type { RequestMeta } from '../context.ts'

/** Long-lived dependencies shared by every request of one process. */
export interface AppDeps extends ServiceDeps {
  /** The metrics cache (Keyv over Redis or memory; src/trpc/cache.ts). */
  cache: Keyv
  /** The Redis connection when REDIS_URL is set (src/platform/redis.ts); `/ready` reports it. */
  redis: RedisConnection | undefined
  limits: RateLimits
  /** sha256(service key) -> service_id, from SERVICE_KEYS. */
  serviceKeyHashes: Map<string, string>
  /** Procedure calls still running; shutdown waits for them before closing the database. */
  inFlight: InFlight
}

/** The context every procedure receives. */
export interface Ctx extends ServiceCtx<AppDeps> {
  cache: Keyv
  /** Success status for the REST surface, from the procedure's meta (201, 204). */
  successStatus?: number
}

declare module './root-types.ts' {
  /** The tRPC root's context is this whole context on the server; front ends' declarations see only its request id. */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the members come from Ctx
  interface RootContext extends Ctx {}
}

/** Returns the function the adapters call once per request. */
export function createContextFactory(deps: AppDeps) {
  return (meta: RequestMeta): Ctx => Object.assign(createServiceContext(deps, meta), { cache: deps.cache })
}
