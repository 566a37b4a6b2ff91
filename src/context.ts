/**
 * The narrow context services take (docs/architecture.md, "The service context").
 *
 * Services, access rules and the composition of a request's caller depend on these types only,
 * never on tRPC or HTTP: the tRPC context (src/trpc/context.ts) extends {@link ServiceCtx}, and a
 * workflow execution builds one of its own to act as its user (src/access/acting-context.ts).
 * The runtime's engines appear here as ports: the few methods services call on the run manager
 * (src/runs/run-manager.ts), the workflow engine (src/workflows/engine.ts), the knowledge
 * engine (src/knowledge/ingest.ts) and the command room engine (src/command-room/engine.ts).
 * This module imports types only, from the platform, entities, wire shapes and those engine classes,
 * none of which imports it back.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { TokenAbility, TokenKind, WorkspaceRole } from '../entities/index.ts'
import type { AuthCache } from './platform/auth-cache.ts'
import type { Config } from './platform/config.ts'
import type { Em, Orm } from './platform/db.ts'
import type { Logger } from './platform/logger.ts'
import type { ReadCache } from './platform/read-cache.ts'
import type { UserRow } from './access/user.schema.ts'
import type { WorkspaceRow } from './access/workspace.schema.ts'
import type { RunManager } from './runs/run-manager.ts'
import type { WorkflowEngine } from './workflows/engine.ts'
import type { KnowledgeEngine } from './knowledge/ingest.ts'
import type { CommandRoomEngine } from './command-room/engine.ts'

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

/** What services call on the runs executing in this process (src/runs/run-manager.ts). */
export type RunsPort = Pick<RunManager, 'bus' | 'start' | 'track' | 'cancel'>

/** What services call on this process's workflow engine (src/workflows/engine.ts). */
export type WorkflowsPort = Pick<WorkflowEngine, 'runHere' | 'runQueued' | 'abort' | 'syncSchedule' | 'webhooks'>

/** What services call on the knowledge engine (src/knowledge/ingest.ts): queue documents, read the retrieval mode. */
export type KnowledgePort = Pick<KnowledgeEngine, 'queue' | 'mode'>

/** What services call on the command room engine (src/command-room/engine.ts): send a firing's job, wake the scheduler for a new due time. */
export type CommandRoomPort = Pick<CommandRoomEngine, 'send' | 'wake'>

/** Long-lived dependencies of one process that services use. */
export interface ServiceDeps {
  orm: Orm
  config: Config
  log: Logger
  /** Resolved bearer tokens of this process; services that change a caller invalidate it. */
  authCache: AuthCache<AuthContext>
  /** Cached single-resource reads of this process; every mutation drops them. */
  readCache: ReadCache
  runs: RunsPort
  workflows: WorkflowsPort
  knowledge: KnowledgePort
  commandRoom: CommandRoomPort
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
