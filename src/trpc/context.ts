/**
 * The tRPC context (STYLE.md rule 5: dependencies are passed explicitly).
 *
 * Both surfaces (tRPC over HTTP and WebSocket, REST through trpc-to-openapi) and the tests'
 * `appRouter.createCaller` build it with {@link createContextFactory}. The request's
 * EntityManager is forked on first use, so a procedure that touches no database pays nothing.
 *
 * tRPC's `next({ ctx })` copies the context with an object spread, which reads every getter:
 * a copy forks the EntityManager whether or not the procedure needs it. Middlewares whose
 * additions depend only on the request's headers (service scope, the authenticated caller) set
 * them on the context in place instead (src/trpc/init.ts). The workspace also depends on the
 * call's input, so the workspace middleware sets it in place only where the context serves one
 * call ({@link RequestMeta.singleCall}, the REST surface) and copies elsewhere.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Keyv } from 'keyv'
import type { FastifyBaseLogger as Logger } from 'fastify'
import type { Config } from '../config.ts'
import type { Em, Orm } from '../db.ts'
import type { AuthContext } from '../services/auth.service.ts'
import type { AuthCache } from '../services/auth-cache.ts'
import type { WorkspaceContext } from '../access/workspace-access.ts'
import type { ReadCache } from '../services/read-cache.ts'
import type { RunManager } from '../llm/run-manager.ts'
import type { WorkflowEngine } from '../workflow-engine/engine.ts'
import type { InFlight } from './in-flight.ts'
import type { RateLimits } from './rate-limit.ts'

/** Long-lived dependencies shared by every request of one process. */
export interface AppDeps {
  orm: Orm
  config: Config
  cache: Keyv
  limits: RateLimits
  log: Logger
  /** sha256(service key) -> service_id, from SERVICE_KEYS. */
  serviceKeyHashes: Map<string, string>
  /** Resolved bearer tokens of this process; services that change a caller invalidate it. */
  authCache: AuthCache
  /** Procedure calls still running; shutdown waits for them before closing the database. */
  inFlight: InFlight
  /** Cached single-resource reads of this process; every mutation procedure drops them. */
  readCache: ReadCache
  /** The runs executing in this process and the bus their events travel on (src/llm/run-manager.ts). */
  runs: RunManager
  /** Workflow executions of this process, the queue and schedules (src/workflow-engine/engine.ts). */
  workflows: WorkflowEngine
}

/** What a transport knows about one request. */
export interface RequestMeta {
  /** Matches the X-Request-Id response header and the log line (API.md section 2, "Errors"). */
  requestId: string
  /** Client address, for rate limits. */
  ip: string
  headers: IncomingHttpHeaders
  /** Sets a response header (Retry-After); a no-op where there is no HTTP response. */
  setHeader: (name: string, value: string) => void
  /**
   * True when the context serves exactly one procedure call (the REST surface), so middlewares
   * may set what depends on the call's input in place; tRPC batches, WebSocket connections and
   * callers share one context between calls.
   */
  singleCall?: boolean
}

/** The context every procedure receives. */
export interface Ctx extends RequestMeta {
  deps: AppDeps
  config: Config
  cache: Keyv
  /** The process logger bound to this request's id, created on first access. */
  readonly log: Logger
  /** A forked EntityManager for this request, created on first access. */
  readonly em: Em
  /** Service scope from X-Service-Authorization; set by the base procedure (API.md section 3). */
  serviceId: string | null
  /**
   * Set by `authedProcedure`, in place. Where calls share a context (a tRPC batch, a WebSocket
   * connection) it may be left from another call with the same headers: only procedures built on
   * `authedProcedure`, which sets it before they run, may read it.
   */
  auth?: AuthContext
  /** Set by `workspaceProcedure`. */
  workspace?: WorkspaceContext
  /** Success status for the REST surface, from the procedure's meta (201, 204). */
  successStatus?: number
}

/** Returns the function the adapters call once per request. */
export function createContextFactory(deps: AppDeps) {
  return (meta: RequestMeta): Ctx => {
    let em: Em | undefined
    let log: Logger | undefined
    return {
      ...meta,
      deps,
      config: deps.config,
      cache: deps.cache,
      // A child logger costs its bindings' serialization: made when a procedure first logs.
      get log() {
        log ??= deps.log.child({ reqId: meta.requestId })
        return log
      },
      get em() {
        em ??= deps.orm.em.fork()
        return em
      },
      serviceId: null,
    }
  }
}
