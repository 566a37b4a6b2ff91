/**
 * The narrow context services take (docs/architecture.md, "The service context").
 *
 * Services, access rules and the composition of a request's caller depend on these types only,
 * never on tRPC or HTTP: the tRPC context (src/trpc/context.ts) extends {@link ServiceCtx}, and a
 * workflow execution builds one of its own to act as its user (src/access/acting-context.ts).
 * The runtime's engines appear in {@link ServiceDeps} as ports that each capability adds to it
 * itself, by declaration merging, in its own `<capability>.port.ts` (src/runs/runs.port.ts,
 * src/workflows/workflows.port.ts, src/knowledge/knowledge.port.ts,
 * src/command-room/command-room.port.ts): this module names no capability, so every capability
 * may import it without a circle. It imports types only, from the platform and the entities.
 * The rows of the caller and their workspace are declared here (the shared resource kit's mappers,
 * src/access/user-workspace.schema.ts, take them), so the context imports nothing above it.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { TokenAbility, TokenKind, WorkspaceRole } from '../entities/index.ts'
import type { AuthCache } from './platform/auth-cache.ts'
import type { Config } from './platform/config.ts'
import type { Em, Orm } from './platform/db.ts'
import type { Logger } from './platform/logger.ts'
import type { ReadCache } from './platform/read-cache.ts'

/** The columns a user mapper needs (camelCase aliases of `users`). */
export interface UserRow {
  id: number
  name: string
  firstName: string
  lastName: string
  email: string
  profilePhotoKey: string | null
  serviceId: string | null
  createdAt: Date | string
  updatedAt: Date | string
}

/** The columns a workspace mapper needs, as raw SQL selects them (camelCase aliases). */
export interface WorkspaceRow {
  id: number
  uuid: string
  slug: string
  name: string
  profilePhotoKey: string | null
  serviceId: string | null
  isOnboarded: boolean
  metadata: Record<string, unknown>
  userId: number
  createdAt: Date | string
  updatedAt: Date | string
}

/** The authenticated caller, attached to the context by `authedProcedure`. */
export interface AuthContext {
  user: UserRow
  /** The user's primary workspace, null when it was deleted. */
  primaryWorkspace: WorkspaceRow | null
  /**
   * The user's role in the primary workspace (null without one), so the most common workspace
   * context (docs/api/tenancy.md: no header, no `workspace_uuid`, no bound workspace) needs no
   * query of its own. Role changes invalidate the cached caller (members.service).
   */
  primaryRole: WorkspaceRole | null
  token: {
    id: number
    uuid: string
    kind: TokenKind
    name: string
    /** The displayable start of the plaintext (`wst_...` / `wat_...`). */
    prefix: string
    abilities: TokenAbility[]
    /** Workspace id an application token is bound to. */
    workspaceId: number | null
    workspaceUuid: string | null
    expiresAt: Date | string | null
    lastUsedAt: Date | string | null
    createdAt: Date | string
  }
}

/** The workspace a request works in, with the caller's role there. */
export interface WorkspaceContext {
  workspace: WorkspaceRow
  role: WorkspaceRole
}

/**
 * Long-lived dependencies of one process that services use. Capabilities add their engines'
 * ports here (module comment); the runtime (src/app.ts) supplies them all.
 */
export interface ServiceDeps {
  orm: Orm
  config: Config
  log: Logger
  /** Resolved bearer tokens of this process; services that change a caller invalidate it. */
  authCache: AuthCache<AuthContext>
  /** Cached single-resource reads of this process; every mutation drops them. */
  readCache: ReadCache
}

/** What a transport knows about one request (an HTTP request, a WebSocket call, a workflow node). */
export interface RequestMeta {
  /** Matches the X-Request-Id response header and the log line (docs/api/conventions.md, "Errors"). */
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

/** The context every service function receives. */
export interface ServiceCtx<D extends ServiceDeps = ServiceDeps> extends RequestMeta {
  deps: D
  config: Config
  /** The process logger bound to this request's id, created on first access. */
  readonly log: Logger
  /** A forked EntityManager for this request, created on first access. */
  readonly em: Em
  /** Service scope from X-Service-Authorization (docs/api/authentication.md). */
  serviceId: string | null
  /** The caller, once authenticated. */
  auth?: AuthContext
  /** The workspace the call works in, once resolved. */
  workspace?: WorkspaceContext
}

/** A context whose caller is authenticated. */
export type AuthedCtx = ServiceCtx & { auth: AuthContext }

/** A context after the workspace is resolved: authenticated, inside a workspace. */
export type ResourceCtx = ServiceCtx & { auth: AuthContext; workspace: WorkspaceContext }

/**
 * Builds a context over `deps` for one request. The EntityManager is forked and the child logger
 * made on first use, so a call that touches neither pays for neither.
 *
 * tRPC's `next({ ctx })` copies the context with an object spread, which reads every getter:
 * middlewares set what depends only on the request in place instead (src/trpc/init.ts).
 */
export function createServiceContext<D extends ServiceDeps>(deps: D, meta: RequestMeta): ServiceCtx<D> {
  let em: Em | undefined
  let log: Logger | undefined
  return {
    ...meta,
    deps,
    config: deps.config,
    // A child logger costs its bindings' serialization: made when a call first logs.
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
