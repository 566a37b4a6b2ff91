/**
 * The audit log as services write it (docs/api/audit.md): {@link audit} records a change with the
 * request's actor, request id, address and user agent, in the change's transaction
 * (src/platform/audit.ts holds the recording and the redaction).
 */
import type { ServiceCtx } from '../context.ts'
import { recordAudit, type AuditActor, type AuditEntry, type AuditRequest } from '../platform/audit.ts'
import type { Em } from '../platform/db.ts'

export { fieldChanges, type AuditActor, type Changes } from '../platform/audit.ts'

/** The token uuid of background work acting as a user (src/access/acting-context.ts): no token of theirs. */
const NO_TOKEN = '00000000-0000-0000-0000-000000000000'

/**
 * The audit request of `ctx`: its caller (a user, else the trusted service, else the system), the
 * request id, the client address and the user agent.
 */
export function auditRequest(ctx: ServiceCtx): AuditRequest {
  const auth = ctx.auth
  const userAgent = ctx.headers['user-agent']
  const token = auth?.token
  return {
    actor: {
      type: auth ? 'user' : ctx.serviceId ? 'service' : 'system',
      userId: auth?.user.id ?? null,
      tokenKind: token && token.uuid !== NO_TOKEN ? token.kind : null,
      tokenUuid: token && token.uuid !== NO_TOKEN ? token.uuid : null,
      serviceId: ctx.serviceId,
    },
    requestId: ctx.requestId,
    ip: ctx.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : null,
  }
}

/**
 * What a service passes: the entry, whose workspace defaults to the request's workspace context,
 * and the actor when it is not the request's caller (a sign-in: the user signing in).
 */
export type AuditInput = Omit<AuditEntry, 'workspaceId'> & { workspaceId?: number | null; actor?: AuditActor }

/**
 * Records the change `entry` by the caller of `ctx`, with `em`: the change's transaction. The
 * workspace is the request's workspace context unless given (sign-in, logout and token events
 * name the user's primary workspace).
 * @throws Error when `em` is not in a transaction; the insert's error otherwise (the change then rolls back).
 */
export async function audit(em: Em, ctx: ServiceCtx, entry: AuditInput): Promise<void> {
  const workspaceId =
    entry.workspaceId !== undefined ? entry.workspaceId : (ctx.workspace?.workspace.id ?? ctx.auth?.primaryWorkspace?.id ?? null)
  await recordAudit(em, requestOf(ctx, entry), { ...entry, workspaceId })
}

const requestOf = (ctx: ServiceCtx, entry: AuditInput): AuditRequest => {
  const request = auditRequest(ctx)
  return entry.actor ? { ...request, actor: entry.actor } : request
}

/** {@link audit} for an event that changes nothing else (a failed sign-in): its own statement. */
export async function auditAlone(ctx: ServiceCtx, entry: AuditInput): Promise<void> {
  const workspaceId = entry.workspaceId !== undefined ? entry.workspaceId : (ctx.workspace?.workspace.id ?? null)
  await recordAudit(ctx.em, requestOf(ctx, entry), { ...entry, workspaceId }, true)
}

/** `profilePhotoKey` -> `profile_photo_key`. */
const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/**
 * The fields `props` of an entity as the audit log records them: under their wire (snake_case)
 * names, absent ones as null. Read before and after a change, they give {@link fieldChanges}.
 */
export function entityFields<T extends object>(entity: T, props: readonly (keyof T & string)[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const prop of props) fields[snakeCase(prop)] = (entity[prop] as unknown) ?? null
  return fields
}
